package cmdtest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdRunSQLPostgresOutage runs `shardpipe run --effect sql` on real
// Kafka and Redis against a private PostgreSQL (fsync and
// synchronous_commit on) that is down when run starts, stopped while run
// consumes, and restarted at once (pg_ctl restart -m immediate) while
// orders land:
//   - down at start: run logs that it waits for PostgreSQL, /readyz
//     answers 503 with the failed "start" check, /healthz 200, and the
//     group has committed nothing; started, the orders land by themselves;
//   - stopped mid-run: /readyz answers 503 naming postgres, and while the
//     effects fail no committed offset passes the orders that had landed;
//     started again, run resumes by itself;
//   - restarted while orders land: nothing is lost or doubled.
//
// At the end every order is one row of a table without a unique
// constraint, its key in the inbox, nothing dead-lettered, lag 0.
func TestCmdRunSQLPostgresOutage(t *testing.T) {
	t.Parallel()
	const partitions = 2
	rounds := []int{100, 100, 600} // orders produced before each phase
	total := 0
	for _, n := range rounds {
		total += n
	}
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	pg := itest.StartPrivatePostgres(t)
	pool := integration.NewPostgresPool(t, pg.URL())
	dbURL, password := sqlTarget(t, pg.URL())
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const table, inbox = "orders_applied", "shardpipe_inbox"
	if _, err := pool.Exec(ctx, "CREATE TABLE "+table+" (order_id text NOT NULL, customer text NOT NULL, amount_cents bigint NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	pool.Close()
	topic := integration.CreateTopic(t, brokers, partitions)
	integration.CreateDeadLetterTopic(t, brokers, topic, partitions)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	group := integration.Group(t)
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	next := 0
	produce := func(n int) {
		t.Helper()
		var recs []*kgo.Record
		for range n {
			id := fmt.Sprintf("order-%04d", next)
			next++
			recs = append(recs, &kgo.Record{Key: []byte(id), Value: fmt.Appendf(nil, `{"order_id":%q,"customer":"c%d","amount_cents":%d}`, id, next%7, 100+next)})
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	landed := func(n int) func(map[string]any) bool {
		return func(m map[string]any) bool { return itest.Num(m, "applied") == int64(n) && itest.Num(m, "lag") == 0 }
	}

	// Down at start.
	pg.Stop(t)
	produce(rounds[0])
	run := itest.StartEnv(t, "run", bin, []string{"SHARDPIPE_SQL_PASSWORD=" + password}, "run", "--brokers", strings.Join(brokers, ","),
		"--topic", topic, "--group", group, "--redis", addr, "--ledger-prefix", prefix, "--effect", "sql", "--sql-url", dbURL,
		"--sql-exec", "INSERT INTO "+table+" (order_id, customer, amount_cents) VALUES (@order_id, @customer, @amount_cents)",
		"--connect-timeout", "3m", "--commit-interval", "200ms", "--report-interval", "100ms",
		"--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	base := "http://" + run.WaitLine(ctx, "serving Prometheus metrics", func(map[string]any) bool { return true })["addr"].(string)
	run.WaitLine(ctx, "", func(m map[string]any) bool {
		msg, _ := m["msg"].(string)
		return strings.HasPrefix(msg, "waiting for PostgreSQL at "+dbURL+" up to 3m0s: ")
	})
	// Bounded: a listener nobody serves yet would hold the request.
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if code, r := probe(sctx, t, base+"/readyz"); code != http.StatusServiceUnavailable || len(r.Checks) != 1 || r.Checks[0].Name != "start" ||
		!strings.Contains(r.Checks[0].Detail, "PostgreSQL") {
		t.Errorf("readyz while PostgreSQL is down at start: %d %+v; want 503 with one failed start check naming PostgreSQL", code, r)
	}
	if code, r := probe(sctx, t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("healthz while starting: %d %+v; want 200 (alive)", code, r)
	}
	if c := itest.GroupCommitted(ctx, t, brokers, group, topic); len(c) != 0 {
		t.Errorf("committed %v before PostgreSQL answered; want nothing", c)
	}
	pg.Start(t)
	run.WaitLine(ctx, "progress", landed(rounds[0]))
	if r := awaitProbe(ctx, t, base+"/readyz", http.StatusOK); checkNamed(r, "postgres") == nil {
		t.Errorf("readyz has no postgres check: %+v", r)
	}

	// Stopped mid-run: the commit stays where the landed orders end.
	before := itest.EndOffsets(ctx, t, brokers, topic)
	pg.Stop(t)
	produce(rounds[1])
	if c := checkNamed(awaitProbe(ctx, t, base+"/readyz", http.StatusServiceUnavailable), "postgres"); c == nil || c.OK ||
		!strings.Contains(c.Detail, "PostgreSQL at "+dbURL) {
		t.Errorf("readyz with PostgreSQL down: postgres check %+v; want failed, naming the server", c)
	}
	// Each partition's effects have failed and been retried past several
	// commit intervals (retry warnings come at most every 5 s a partition).
	for range 2 * partitions {
		run.WaitLine(ctx, "", func(m map[string]any) bool {
			msg, _ := m["msg"].(string)
			return strings.HasPrefix(msg, "effect failed, retrying the record") || strings.HasPrefix(msg, "sink failed, retrying the batch")
		})
	}
	for p, off := range itest.GroupCommitted(ctx, t, brokers, group, topic) {
		if off > before[p] {
			t.Errorf("partition %d committed at %d while PostgreSQL was down; only offsets below %d had landed", p, off, before[p])
		}
	}
	pg.Start(t)
	run.WaitLine(ctx, "progress", landed(rounds[0]+rounds[1]))

	// Restarted at once while orders land: the last round is produced at a
	// steady rate (one order each 5 ms) and PostgreSQL restarted once some
	// of it landed, so orders arrive before, during and after the restart.
	var produced atomic.Int64
	done := make(chan error, 1)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond) // the producer's pace, not a wait
		defer tick.Stop()
		for i := range rounds[2] {
			id := fmt.Sprintf("order-%04d", next+i)
			if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(id),
				Value: fmt.Appendf(nil, `{"order_id":%q,"customer":"c%d","amount_cents":%d}`, id, i%7, 100+i)}).FirstErr(); err != nil {
				done <- err
				return
			}
			produced.Add(1)
			select {
			case <-tick.C:
			case <-ctx.Done():
				done <- ctx.Err()
				return
			}
		}
		done <- nil
	}()
	run.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "applied") > int64(rounds[0]+rounds[1]) })
	pg.Restart(t)
	if n := produced.Load(); n >= int64(rounds[2]) {
		t.Errorf("the last round was all produced before PostgreSQL was back: the restart was not mid-run")
	}
	if err := <-done; err != nil {
		t.Fatalf("producing the last round: %v", err)
	}
	run.WaitLine(ctx, "progress", landed(total))
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("run after SIGTERM: exit %d\n%s", code, run.Output())
	}
	if out := run.Output(); strings.Contains(out, password) {
		t.Errorf("run's output shows the password")
	}

	pool = integration.NewPostgresPool(t, pg.URL())
	n := countSQL(ctx, t, pool, table, inbox)
	if n.rows != total || n.distinct != total || n.inbox != total {
		t.Errorf("table holds %d rows (%d distinct orders), the inbox %d keys; want %d of each", n.rows, n.distinct, n.inbox, total)
	}
	ends, committed := itest.EndOffsets(ctx, t, brokers, topic), itest.GroupCommitted(ctx, t, brokers, group, topic)
	for p, end := range ends {
		if committed[p] != end {
			t.Errorf("partition %d committed at %d, its end is %d", p, committed[p], end)
		}
	}
}
