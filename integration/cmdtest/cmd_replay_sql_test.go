package cmdtest_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// guardReplayEnv is one test's topic, Redis prefixes and binary for run
// and replay with a guard-mode effect.
type guardReplayEnv struct {
	t           *testing.T
	bin         string
	brokers     []string
	addr, topic string
	prefix      string   // the test's Redis prefix; ledger, checkpoints and markers live under it
	effect      []string // the effect's flags
	env         []string // the processes' environment, added
}

func newGuardReplayEnv(t *testing.T, bin string) *guardReplayEnv {
	t.Helper()
	e := &guardReplayEnv{t: t, bin: bin, brokers: integration.Kafka(t), addr: integration.Redis(t)}
	e.prefix = integration.RedisPrefix(t, integration.NewRedisClient(t, e.addr))
	e.topic = integration.CreateTopic(t, e.brokers, 2)
	integration.CreateDeadLetterTopic(t, e.brokers, e.topic, 2)
	return e
}

func (e *guardReplayEnv) ledger() string { return e.prefix + "ledger:" }

// produce writes orders order IDs, every fifth sent twice; it returns the
// number of records.
func (e *guardReplayEnv) produce(ctx context.Context, orders int) int {
	e.t.Helper()
	cl := integration.NewKafkaClient(e.t, e.brokers, kgo.DefaultProduceTopic(e.topic))
	var recs []*kgo.Record
	for i := range orders {
		id := fmt.Sprintf("order-%03d", i)
		v := fmt.Appendf(nil, `{"order_id":%q,"customer":"c%d","amount_cents":%d}`, id, i%7, 100+i)
		recs = append(recs, &kgo.Record{Key: []byte(id), Value: v})
		if i%5 == 0 {
			recs = append(recs, &kgo.Record{Key: []byte(id), Value: v})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
	return len(recs)
}

// common are the flags run and replay share here: the servers, the ledger
// and the effect (effect when not nil, else e.effect).
func (e *guardReplayEnv) common(effect []string) []string {
	if effect == nil {
		effect = e.effect
	}
	return append([]string{"--brokers", strings.Join(e.brokers, ","), "--topic", e.topic, "--redis", e.addr,
		"--ledger-prefix", e.ledger(), "--dlq-prefix", e.prefix + "dlq:", "--report-interval", "100ms", "--log-format", "json"}, effect...)
}

// run runs `shardpipe run` with e.effect until it applied orders with no
// lag, then stops it with SIGTERM.
func (e *guardReplayEnv) run(ctx context.Context, orders int) {
	e.t.Helper()
	run := itest.StartEnv(e.t, "run", e.bin, e.env, append([]string{"run", "--group", integration.Group(e.t), "--commit-interval", "200ms"}, e.common(nil)...)...)
	run.WaitLine(ctx, "progress", func(m map[string]any) bool {
		return itest.Num(m, "lag") == 0 && itest.Num(m, "applied") == int64(orders)
	})
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		e.t.Fatalf("run after SIGTERM: exit %d\n%s", code, run.Output())
	}
}

// dropClaims deletes the ledger's Redis keys (an outage, a flush), which
// hold n claims.
func (e *guardReplayEnv) dropClaims(ctx context.Context, n int) {
	e.t.Helper()
	rdb := integration.NewRedisClient(e.t, e.addr)
	keys, err := rdb.Keys(ctx, e.ledger()+"*").Result()
	if err != nil || len(keys) != n {
		e.t.Fatalf("ledger keys %d (%v); want %d", len(keys), err, n)
	}
	if err := rdb.Del(ctx, keys...).Err(); err != nil {
		e.t.Fatal(err)
	}
}

// claims counts the ledger's Redis keys.
func (e *guardReplayEnv) claims(ctx context.Context) int {
	return itest.CountRedisKeys(ctx, e.t, integration.NewRedisClient(e.t, e.addr), e.ledger()+"*")
}

// replayResult is a replay process's exit code, its summed
// "replay partition" counts, how many "replay progress" lines it logged,
// and its output.
type replayResult struct {
	code                      int
	read, applied, suppressed int64
	progress                  int
	out                       string
}

// replay runs `shardpipe replay` over the whole topic under id to its end,
// with effect's flags (nil: e.effect).
func (e *guardReplayEnv) replay(ctx context.Context, id string, effect []string, extra ...string) replayResult {
	e.t.Helper()
	args := append([]string{"replay", "--id", id, "--from", "0", "--checkpoint-prefix", e.prefix + "replay:"}, e.common(effect)...)
	p := itest.StartEnv(e.t, "replay "+id, e.bin, e.env, append(args, extra...)...)
	r := replayResult{code: p.Wait(ctx)}
	for m := range p.Lines {
		switch m["msg"] {
		case "replay partition":
			r.read += itest.Num(m, "read")
			r.applied += itest.Num(m, "applied")
			r.suppressed += itest.Num(m, "suppressed")
		case "replay progress":
			r.progress++
		}
	}
	r.out = p.Output()
	return r
}

// sqlReplayEnv is a guardReplayEnv with --effect sql on the kit's
// PostgreSQL: a table without a unique constraint and an inbox.
type sqlReplayEnv struct {
	*guardReplayEnv
	dbURL, password    string
	pool               *pgxpool.Pool
	table, inbox, exec string
}

func newSQLReplayEnv(t *testing.T, bin string) *sqlReplayEnv {
	t.Helper()
	e := &sqlReplayEnv{guardReplayEnv: newGuardReplayEnv(t, bin)}
	e.pool = integration.NewPostgresPool(t, integration.Postgres(t))
	e.dbURL, e.password = sqlTarget(t, integration.Postgres(t))
	e.table, e.inbox = integration.PostgresTable(t, e.pool), integration.PostgresTable(t, e.pool)
	// No unique constraint: a statement run twice for an order is two rows.
	if _, err := e.pool.Exec(context.Background(), "CREATE TABLE "+e.table+" (order_id text NOT NULL, customer text NOT NULL, amount_cents bigint NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	e.exec = "INSERT INTO " + e.table + " (order_id, customer, amount_cents) VALUES (@order_id, @customer, @amount_cents)"
	e.effect = []string{"--effect", "sql", "--sql-url", e.dbURL, "--sql-exec", e.exec, "--sql-inbox-table", e.inbox}
	e.env = []string{"SHARDPIPE_SQL_PASSWORD=" + e.password}
	return e
}

// rows counts the table's rows, its distinct orders and the inbox's keys.
func (e *sqlReplayEnv) rows(ctx context.Context) (rows, distinct, inboxed int) {
	e.t.Helper()
	if err := e.pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT order_id) FROM "+e.table).Scan(&rows, &distinct); err != nil {
		e.t.Fatal(err)
	}
	if err := e.pool.QueryRow(ctx, "SELECT count(*) FROM "+e.inbox).Scan(&inboxed); err != nil {
		e.t.Fatal(err)
	}
	return rows, distinct, inboxed
}

// TestCmdReplaySQLEffect: `replay --effect sql` applies as `run --effect
// sql` does, on the real Kafka, Redis and PostgreSQL. After run applied 40
// orders (and 8 re-sends) into a table without a unique constraint, a
// replay of the whole topic suppresses every record by the Redis ledger
// (its summary: 0 applied, 48 suppressed) and the table is unchanged; a dry
// run pointed at a PostgreSQL that does not exist answers from Redis
// alone; then, the ledger's Redis keys deleted, a replay at --rate 100
// (progress lines logged) finds each order in the inbox and does not run
// the statement again: still one row per order, and the ledger holds
// every key again; the same once more in batches (--max-in-flight 0: one
// transaction per batch).
func TestCmdReplaySQLEffect(t *testing.T) {
	t.Parallel()
	const orders = 40
	e := newSQLReplayEnv(t, itest.BuildShardpipe(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	records := int64(e.produce(ctx, orders))
	e.run(ctx, orders)
	if rows, distinct, inboxed := e.rows(ctx); rows != orders || distinct != orders || inboxed != orders {
		t.Fatalf("after run: %d rows of %d orders, %d inbox keys; want %d of each", rows, distinct, inboxed, orders)
	}

	r := e.replay(ctx, "again", nil)
	if r.code != 0 || r.read != records || r.applied != 0 || r.suppressed != records {
		t.Fatalf("replay of what run applied: exit %d, read %d applied %d suppressed %d; want 0, %d, 0, %d\n%s",
			r.code, r.read, r.applied, r.suppressed, records, records, r.out)
	}
	if rows, distinct, inboxed := e.rows(ctx); rows != orders || distinct != orders || inboxed != orders {
		t.Fatalf("after the replay: %d rows of %d orders, %d inbox keys; want %d of each", rows, distinct, inboxed, orders)
	}

	// The keys' Redis claims are gone (an outage, a flush): only the inbox
	// knows the orders landed.
	e.dropClaims(ctx, orders)

	// A dry run asks Redis only: a PostgreSQL at a port nobody listens on
	// is not contacted (it would exit 3), and every key counts as would-apply.
	dead := []string{"--effect", "sql", "--sql-url", "postgres://nobody@127.0.0.1:1/none", "--sql-exec", e.exec, "--sql-inbox-table", e.inbox}
	dry := e.replay(ctx, "dry", dead, "--dry-run", "--connect-timeout", "2s")
	if dry.code != 0 || dry.applied != orders || dry.suppressed != records-orders || !strings.Contains(dry.out, "PostgreSQL not contacted") {
		t.Fatalf("dry run: exit %d, would apply %d, suppress %d; want 0, %d, %d, and PostgreSQL not contacted\n%s",
			dry.code, dry.applied, dry.suppressed, orders, records-orders, dry.out)
	}

	r = e.replay(ctx, "inbox", nil, "--rate", "100")
	if r.code != 0 || r.read != records || r.applied != orders || r.suppressed != records-orders || r.progress == 0 {
		t.Fatalf("replay after the ledger keys were deleted: exit %d, read %d applied %d suppressed %d, %d progress lines; want 0, %d, %d, %d, some\n%s",
			r.code, r.read, r.applied, r.suppressed, r.progress, records, orders, records-orders, r.out)
	}
	if rows, distinct, inboxed := e.rows(ctx); rows != orders || distinct != orders || inboxed != orders {
		t.Fatalf("after the replay without ledger keys: %d rows of %d orders, %d inbox keys; want %d of each: the statement ran again",
			rows, distinct, inboxed, orders)
	}
	if n := e.claims(ctx); n != orders {
		t.Fatalf("ledger keys after the replay: %d, want %d", n, orders)
	}

	// The same in batches: one transaction per batch (--max-in-flight 0).
	e.dropClaims(ctx, orders)
	r = e.replay(ctx, "inbox-batches", nil, "--max-in-flight", "0")
	if r.code != 0 || r.read != records || r.applied != orders || r.suppressed != records-orders {
		t.Fatalf("replay in batches after the ledger keys were deleted: exit %d, read %d applied %d suppressed %d; want 0, %d, %d, %d\n%s",
			r.code, r.read, r.applied, r.suppressed, records, orders, records-orders, r.out)
	}
	if rows, distinct, inboxed := e.rows(ctx); rows != orders || distinct != orders || inboxed != orders {
		t.Fatalf("after the replay in batches: %d rows of %d orders, %d inbox keys; want %d of each: the statement ran again",
			rows, distinct, inboxed, orders)
	}
}

// TestCmdReplaySQLRefusals: replay --effect sql refuses what run refuses,
// before any record: a ledger whose manifest records another effect
// (exit 2, naming both), and the other way round; a statement PostgreSQL
// cannot prepare (exit 2); a --sql-url carrying a password (exit 2); a
// wrong password (exit 3). A refused replay runs no statement.
func TestCmdReplaySQLRefusals(t *testing.T) {
	t.Parallel()
	e := newSQLReplayEnv(t, itest.BuildShardpipe(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e.produce(ctx, 5)
	totals := []string{"--effect", "totals", "--totals-hash", e.prefix + "totals"}

	// Two ledgers, their manifests written by the first replay on each.
	if r := e.replay(ctx, "make-totals", totals); r.code != 0 {
		t.Fatalf("replay --effect totals: exit %d\n%s", r.code, r.out)
	}
	sqlLedger := e.prefix + "sql-ledger:"
	onSQL := func(args []string) []string { return append(args, "--ledger-prefix", sqlLedger) }
	if r := e.replay(ctx, "make-sql", onSQL([]string{"--effect", "sql", "--sql-url", e.dbURL, "--sql-exec", e.exec, "--sql-inbox-table", e.inbox})); r.code != 0 || r.applied != 5 {
		t.Fatalf("replay --effect sql on a new ledger: exit %d, applied %d; want 0, 5\n%s", r.code, r.applied, r.out)
	}
	rows, _, _ := e.rows(ctx)

	for _, tt := range []struct {
		name    string
		sqlArgs []string
		env     string // SHARDPIPE_SQL_PASSWORD, when not the right one
		code    int
		want    string
	}{
		{"sql on a totals ledger", []string{"--effect", "sql", "--sql-url", e.dbURL, "--sql-exec", e.exec, "--sql-inbox-table", e.inbox}, "", 2,
			`--effect (SHARDPIPE_EFFECT) "sql": the ledger under --ledger-prefix (SHARDPIPE_LEDGER_PREFIX) "` + e.ledger() + `" was made with "totals"`},
		{"totals on an sql ledger", onSQL(totals), "", 2, `--effect (SHARDPIPE_EFFECT) "totals": the ledger under --ledger-prefix (SHARDPIPE_LEDGER_PREFIX) "` + sqlLedger + `" was made with "sql"`},
		{"no effect on an sql ledger", onSQL([]string{}), "", 2, `was made with "sql"`},
		{"bad statement", onSQL([]string{"--effect", "sql", "--sql-url", e.dbURL, "--sql-exec", "INSRT INTO " + e.table + " VALUES (@order_id)", "--sql-inbox-table", e.inbox}), "", 2,
			`--sql-exec (SHARDPIPE_SQL_EXEC): PostgreSQL at ` + e.dbURL + ` refused the statement`},
		{"password in the URL", onSQL([]string{"--effect", "sql", "--sql-url", strings.Replace(e.dbURL, "@", ":s3cret@", 1), "--sql-exec", e.exec}), "", 2, "carries a password"},
		{"wrong password", onSQL([]string{"--effect", "sql", "--sql-url", e.dbURL, "--sql-exec", e.exec, "--sql-inbox-table", e.inbox}), e.password + "-wrong", 3,
			"refused the credentials of user"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			password := e.password
			if tt.env != "" {
				password = tt.env
			}
			args := append([]string{"replay", "--id", "refused", "--from", "0", "--checkpoint-prefix", e.prefix + "replay:", "--connect-timeout", "5s"}, e.common(tt.sqlArgs)...)
			p := itest.StartEnv(t, "replay "+tt.name, e.bin, []string{"SHARDPIPE_SQL_PASSWORD=" + password}, args...)
			if code := p.Wait(ctx); code != tt.code || !strings.Contains(p.Output(), tt.want) {
				t.Fatalf("exit %d, want %d naming %q\n%s", code, tt.code, tt.want, p.Output())
			}
			if strings.Contains(p.Output(), "s3cret") || tt.env != "" && strings.Contains(p.Output(), tt.env) {
				t.Fatalf("the output shows a password:\n%s", p.Output())
			}
			if now, _, _ := e.rows(ctx); now != rows {
				t.Fatalf("the refused replay changed the table: %d rows, had %d", now, rows)
			}
		})
	}
}
