package cmdtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/pipeline"
)

// sqlTarget is the kit's PostgreSQL as run takes it: the URL without its
// password, and the password for SHARDPIPE_SQL_PASSWORD.
func sqlTarget(t *testing.T, raw string) (dbURL, password string) {
	t.Helper()
	return integration.PostgresWithoutPassword(t, raw)
}

// TestCmdRunSQLEffect runs `shardpipe run --effect sql` on the real Kafka,
// Redis and PostgreSQL: 50 orders plus 10 re-sends, one order failing the
// table's CHECK, one lacking a field the statement names and one whose
// amount does not parse as a bigint. Each good order is a row once in a
// table without a unique constraint, its key in the inbox; the three bad
// ones are dead-lettered, each naming its cause, while the others land.
func TestCmdRunSQLEffect(t *testing.T) {
	t.Parallel()
	const orders, resends = 50, 10
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	pool := integration.NewPostgresPool(t, integration.Postgres(t))
	dbURL, password := sqlTarget(t, integration.Postgres(t))
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	table, inbox := integration.PostgresTable(t, pool), integration.PostgresTable(t, pool)
	if _, err := pool.Exec(ctx, "CREATE TABLE "+table+" (order_id text NOT NULL, customer text NOT NULL, amount_cents bigint NOT NULL CHECK (amount_cents > 0))"); err != nil {
		t.Fatal(err)
	}
	topic := integration.CreateTopic(t, brokers, 2)
	dlq := integration.CreateDeadLetterTopic(t, brokers, topic, 2)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)

	cl := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	var recs []*kgo.Record
	for i := range orders + resends {
		id := fmt.Sprintf("order-%03d", i%orders)
		recs = append(recs, &kgo.Record{Key: []byte(id), Value: fmt.Appendf(nil, `{"order_id":%q,"customer":"c%d","amount_cents":%d}`, id, i%7, 100+i%orders)})
	}
	recs = append(recs,
		&kgo.Record{Key: []byte("order-negative"), Value: []byte(`{"order_id":"order-negative","customer":"c1","amount_cents":-5}`)},
		&kgo.Record{Key: []byte("order-nocustomer"), Value: []byte(`{"order_id":"order-nocustomer","amount_cents":5}`)},
		&kgo.Record{Key: []byte("order-notanumber"), Value: []byte(`{"order_id":"order-notanumber","customer":"c1","amount_cents":"five"}`)})
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	run := itest.StartEnv(t, "run", bin, []string{"SHARDPIPE_SQL_PASSWORD=" + password}, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic,
		"--group", integration.Group(t), "--redis", addr, "--ledger-prefix", prefix, "--effect", "sql", "--sql-url", dbURL,
		"--sql-exec", "INSERT INTO "+table+" (order_id, customer, amount_cents) VALUES (@order_id, @customer, @amount_cents)",
		"--sql-inbox-table", inbox, "--poison-attempts", "1", "--commit-interval", "200ms", "--report-interval", "100ms", "--log-format", "json")
	run.WaitLine(ctx, "progress", func(m map[string]any) bool {
		return itest.Num(m, "lag") == 0 && itest.Num(m, "dead_lettered") == 3 && itest.Num(m, "applied") == orders
	})
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("run after SIGTERM: exit %d\n%s", code, run.Output())
	}

	n := countSQL(ctx, t, pool, table, inbox)
	if n.rows != orders || n.distinct != orders || n.inbox != orders {
		t.Errorf("table holds %d rows of %d orders, the inbox %d keys; want %d of each", n.rows, n.distinct, n.inbox, orders)
	}
	dl := integration.NewKafkaClient(t, brokers, kgo.ConsumeTopics(dlq), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	causes, attempts := map[string]string{}, map[string]string{}
	for len(causes) < 3 && ctx.Err() == nil {
		fs := dl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			for _, h := range r.Headers {
				switch h.Key {
				case pipeline.HeaderError:
					causes[string(r.Key)] = string(h.Value)
				case pipeline.HeaderAttempts:
					attempts[string(r.Key)] = string(h.Value)
				}
			}
		})
	}
	// Each is dead-lettered after one attempt: the record's own fault (the
	// server refused its data, or a field is missing with
	// --poison-attempts 1), not a failure to retry --effect-attempts times.
	for key, want := range map[string]string{"order-negative": "violates check constraint", "order-nocustomer": `field "customer" (the statement's @customer) is missing`,
		"order-notanumber": `invalid input syntax for type bigint: "five"`} {
		if !strings.Contains(causes[key], want) || attempts[key] != "1" {
			t.Errorf("dead letter of %s: %s %q after %s attempts; want it to name %q after 1", key, pipeline.HeaderError, causes[key], attempts[key], want)
		}
	}
}

// TestCmdRunSQLStartChecks: run --effect sql checks the database before it
// consumes: a statement PostgreSQL cannot prepare (bad syntax, an unknown
// table or column) exits 2 naming the statement and the server's error; a
// wrong password exits 3 naming the user and where the password came from.
func TestCmdRunSQLStartChecks(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	pool := integration.NewPostgresPool(t, integration.Postgres(t))
	dbURL, password := sqlTarget(t, integration.Postgres(t))
	bin := itest.BuildShardpipe(t)
	topic := integration.CreateTopic(t, brokers, 1)
	integration.CreateDeadLetterTopic(t, brokers, topic, 1)
	table, inbox := integration.PostgresTable(t, pool), integration.PostgresTable(t, pool)
	if _, err := pool.Exec(context.Background(), "CREATE TABLE "+table+" (order_id text)"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, exec, password string
		code                 int
		want                 string
	}{
		{"syntax", "INSRT INTO " + table + " VALUES (@order_id)", password, 2, `syntax error at or near "INSRT"`},
		{"unknown table", "INSERT INTO " + table + "_missing VALUES (@order_id)", password, 2, `relation "` + table + `_missing" does not exist`},
		{"unknown column", "INSERT INTO " + table + " (order_ix) VALUES (@order_id)", password, 2, `column "order_ix" of relation "` + table + `" does not exist`},
		{"wrong password", "INSERT INTO " + table + " VALUES (@order_id)", password + "-wrong", 3, "refused the credentials of user"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--redis", addr,
				"--ledger-prefix", integration.KeyPrefix(t), "--connect-timeout", "5s", "--effect", "sql", "--sql-url", dbURL,
				"--sql-exec", tt.exec, "--sql-inbox-table", inbox)
			cmd.Env = append(itest.WithoutShardpipeEnv(), "SHARDPIPE_SQL_PASSWORD="+tt.password)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.code {
				t.Fatalf("exit: %v, want code %d\n%s", err, tt.code, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Fatalf("output does not name %q:\n%s", tt.want, out)
			}
			if strings.Contains(string(out), tt.password) && tt.password != "" {
				t.Fatalf("output shows the password:\n%s", out)
			}
		})
	}
}

// TestCmdRunSQLOnePooledConnection: run --effect sql starts and lands its
// orders with a pool of one connection (pool_max_conns=1): its start-up
// checks give their connection back before creating the inbox, which
// takes one of its own (before, run waited for itself and exited 3 at
// --connect-timeout).
func TestCmdRunSQLOnePooledConnection(t *testing.T) {
	t.Parallel()
	const orders = 30
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	pool := integration.NewPostgresPool(t, integration.Postgres(t))
	dbURL, password := sqlTarget(t, integration.Postgres(t))
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "1")
	u.RawQuery = q.Encode()
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	table, inbox := ordersTable(ctx, t, pool)
	topic := integration.CreateTopic(t, brokers, 2)
	produceSQLOrders(ctx, t, brokers, topic, orders)
	rdb := integration.NewRedisClient(t, addr)
	run := itest.StartEnv(t, "run", bin, []string{"SHARDPIPE_SQL_PASSWORD=" + password}, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic,
		"--group", integration.Group(t), "--redis", addr, "--ledger-prefix", integration.RedisPrefix(t, rdb), "--effect", "sql", "--sql-url", u.String(),
		"--sql-exec", "INSERT INTO "+table+" (order_id, customer, amount_cents) VALUES (@order_id, @customer, @amount_cents)",
		"--sql-inbox-table", inbox, "--connect-timeout", "20s", "--commit-interval", "200ms", "--report-interval", "100ms", "--log-format", "json")
	run.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "lag") == 0 && itest.Num(m, "applied") == orders })
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("run after SIGTERM: exit %d\n%s", code, run.Output())
	}
	if n := countSQL(ctx, t, pool, table, inbox); n != (sqlTally{orders, orders, orders}) {
		t.Errorf("table and inbox %+v; want %d of each", n, orders)
	}
}
