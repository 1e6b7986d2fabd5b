package cmdtest_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/sink"
)

// TestCmdRunSQLKilledAfterCommit: `run --effect sql` SIGKILLed between the
// database COMMIT and the done write (the fault point of a binary built with
// the shardpipe_faults tag: SHARDPIPE_FAULT_KILL_AFTER_EFFECT=1), in batches
// (one transaction per batch) and with --max-in-flight. The kill lands in
// the window: rows are committed, their guard claims still pending, nothing
// committed in Kafka. The next run waits out the claims' lease, finds the
// keys in the inbox and applies nothing twice: one row per order in a table
// without a unique constraint.
func TestCmdRunSQLKilledAfterCommit(t *testing.T) {
	t.Parallel()
	const orders = 200
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	pool := integration.NewPostgresPool(t, integration.Postgres(t))
	dbURL, password := sqlTarget(t, integration.Postgres(t))
	bin := itest.BuildShardpipe(t, "shardpipe_faults")
	for _, tt := range []struct{ name, inFlight string }{{"batches", "0"}, {"in flight", "16"}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			table, inbox := ordersTable(ctx, t, pool)
			topic := integration.CreateTopic(t, brokers, 2)
			rdb := integration.NewRedisClient(t, addr)
			prefix := integration.RedisPrefix(t, rdb)
			group := integration.Group(t)
			produceSQLOrders(ctx, t, brokers, topic, orders)
			args := []string{"run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group, "--redis", addr,
				"--ledger-prefix", prefix, "--effect", "sql", "--sql-url", dbURL, "--max-in-flight", tt.inFlight,
				"--sql-exec", "INSERT INTO " + table + " (order_id, customer, amount_cents) VALUES (@order_id, @customer, @amount_cents)",
				"--sql-inbox-table", inbox, "--commit-interval", "200ms", "--report-interval", "100ms", "--log-format", "json"}
			env := []string{"SHARDPIPE_SQL_PASSWORD=" + password}

			killed := itest.StartEnv(t, "run killed after a commit", bin, append(env, "SHARDPIPE_FAULT_KILL_AFTER_EFFECT=1"), args...)
			killed.Wait(ctx)
			if ws, ok := killed.Cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the first run ended with %v, want death by SIGKILL at the fault point\n%s", killed.Cmd.ProcessState, killed.Output())
			}
			n := countSQL(ctx, t, pool, table, inbox)
			if n.rows == 0 || n.rows != n.inbox || tt.inFlight == "0" && n.rows < 2 {
				t.Fatalf("after the kill: %+v; want rows committed with their inbox keys (in batches, a batch's)", n)
			}
			if c := itest.GroupCommitted(ctx, t, brokers, group, topic); len(c) != 0 {
				t.Errorf("committed %v before any effect was marked done", c)
			}
			if pending := pendingClaims(ctx, t, pool, rdb, prefix, inbox); pending == 0 {
				t.Errorf("no inbox key's guard claim is pending: the kill missed the window between COMMIT and done")
			}

			run := itest.StartEnv(t, "run", bin, env, args...)
			run.WaitLine(ctx, "progress", func(m map[string]any) bool {
				return itest.Num(m, "lag") == 0 && itest.Num(m, "applied") == orders
			})
			run.Signal(syscall.SIGTERM)
			if code := run.Wait(ctx); code != 0 {
				t.Fatalf("run after SIGTERM: exit %d\n%s", code, run.Output())
			}
			if n := countSQL(ctx, t, pool, table, inbox); n != (sqlTally{orders, orders, orders}) {
				t.Errorf("table and inbox %+v; want %d rows, distinct orders and inbox keys", n, orders)
			}
		})
	}
}

// pendingClaims counts the keys of inbox whose guard claim (under prefix)
// is pending: committed in PostgreSQL, not marked done in Redis.
func pendingClaims(ctx context.Context, t *testing.T, pool *pgxpool.Pool, rdb redis.UniversalClient, prefix, inbox string) int {
	t.Helper()
	rows, err := pool.Query(ctx, "SELECT key FROM "+inbox)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	pending := 0
	for _, k := range keys {
		v, err := rdb.Get(ctx, prefix+k).Result()
		if err != nil {
			t.Fatalf("guard claim of inbox key %q: %v", k, err)
		}
		c, err := sink.DecodeClaim(v)
		if err != nil {
			t.Fatalf("guard claim of inbox key %q: %v", k, err)
		}
		if c.State == sink.ClaimPending {
			pending++
		}
	}
	return pending
}
