package cmdtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/clusters"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/sink"
)

// TestCmdRedisCluster runs `shardpipe run` and `shardpipe replay` with the
// ledger on a real Redis Cluster (three masters, one replica each, started
// by scripts/services.sh and shared by the subtests, each under keys of its
// own) and the shared Kafka broker:
//   - the ledger and the dead-letter markers: every order applied once, its
//     ledger key on the master of its slot (spread over all three), each
//     keyless record in the dead-letter topic once with a done marker;
//   - --effect totals with a {hash tag}: exact totals, and every ledger key
//     on the one master of the tag's slot (the price of atomic effects);
//   - guard mode (--effect http): each order's effect called once, every
//     guard claim done, spread over the masters;
//   - replay: its checkpoints live on the cluster; a replay SIGKILLed part
//     way resumes from them and restores lost ledger entries and totals.
func TestCmdRedisCluster(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	bin := itest.BuildShardpipe(t)
	rc := itest.RedisCluster(t)
	c := itest.ClusterClient(t, rc)
	t.Run("ledger and dead letters", func(t *testing.T) { t.Parallel(); clusterLedger(t, brokers, bin, rc, c) })
	t.Run("totals with a hash tag", func(t *testing.T) { t.Parallel(); clusterTotals(t, brokers, bin, rc, c) })
	t.Run("guard mode", func(t *testing.T) { t.Parallel(); clusterGuard(t, brokers, bin, rc, c) })
	t.Run("replay checkpoints", func(t *testing.T) { t.Parallel(); clusterReplay(t, brokers, bin, rc, c) })
}

// produceOrders runs `shardpipe produce` (count orders, 10% re-sends) and
// returns how many records it wrote.
func produceOrders(ctx context.Context, t *testing.T, bin string, brokers []string, topic string, count, seed int) int {
	t.Helper()
	p := itest.Start(t, "produce", bin, "produce", "--brokers", strings.Join(brokers, ","), "--topic", topic,
		"--count", fmt.Sprint(count), "--duplicates", "0.1", "--seed", fmt.Sprint(seed))
	if code := p.Wait(ctx); code != 0 {
		t.Fatalf("produce: exit %d\n%s", code, p.Output())
	}
	return count + count/10
}

// runToEnd runs `shardpipe run` with args until it has consumed everything
// with the wanted dead letters, then stops it with SIGTERM (exit 0).
func runToEnd(ctx context.Context, t *testing.T, bin string, dead int64, args ...string) {
	t.Helper()
	run := itest.Start(t, "run", bin, append([]string{"run", "--commit-interval", "200ms", "--report-interval", "100ms",
		"--session-timeout", "6s", "--log-format", "json"}, args...)...)
	run.WaitLine(ctx, "progress", func(m map[string]any) bool {
		return itest.Num(m, "lag") == 0 && m["lag_err"] == nil && itest.Num(m, "dead_lettered") == dead
	})
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("run after SIGTERM: exit %d\n%s", code, run.Output())
	}
}

func clusterLedger(t *testing.T, brokers []string, bin string, rc *clusters.Redis, c *redis.ClusterClient) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 4)
	dlq := integration.CreateDeadLetterTopic(t, brokers, topic, 4)
	records := produceOrders(ctx, t, bin, brokers, topic, 300, 21)
	cl := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	for i := range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, `{"keyless":%d}`, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	base := integration.KeyPrefix(t)
	runToEnd(ctx, t, bin, 3, "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", integration.Group(t),
		"--redis", strings.Join(rc.Addrs, ","), "--ledger-prefix", base+"ledger:", "--dlq-prefix", base+"sp:")

	exp := itest.ReadTopic(ctx, t, brokers, topic, records+3)
	keys, per := itest.ClusterKeys(ctx, t, rc, c, base+"ledger:")
	if len(keys) != 300 {
		t.Fatalf("ledger holds %d keys, want the 300 orders", len(keys))
	}
	for _, ks := range exp.KeyAt {
		for _, k := range ks {
			if k != "" && !keys[k] {
				t.Fatalf("order %s has no ledger key", k)
			}
		}
	}
	if len(per) != 3 {
		t.Fatalf("ledger keys per master %v: want them spread over all three", per)
	}
	t.Logf("ledger keys per master (node: keys): %v", per)
	markers, _ := itest.ClusterKeys(ctx, t, rc, c, base+"sp:dlq:")
	if len(markers) != 3 {
		t.Fatalf("%d dead-letter markers %v, want one per keyless record", len(markers), markers)
	}
	for m := range markers {
		v, err := c.Get(ctx, base+"sp:dlq:"+m).Result()
		if err != nil || !strings.Contains(v, `"state":"done"`) {
			t.Fatalf("marker %s = %q (%v), want done", m, v, err)
		}
	}
	if n := countRecords(ctx, t, brokers, dlq); n != 3 {
		t.Fatalf("dead-letter topic holds %d records, want 3", n)
	}
}

// countRecords reads topic from its start to its end and counts the records.
func countRecords(ctx context.Context, t *testing.T, brokers []string, topic string) int {
	t.Helper()
	ends := itest.EndOffsets(ctx, t, brokers, topic)
	want := int64(0)
	for _, e := range ends {
		want += e
	}
	cl := integration.NewKafkaClient(t, brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	n := 0
	for int64(n) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: %d of %d records: %v", topic, n, want, ctx.Err())
		}
		n += fs.NumRecords()
	}
	return n
}

func clusterTotals(t *testing.T, brokers []string, bin string, rc *clusters.Redis, c *redis.ClusterClient) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 4)
	integration.CreateDeadLetterTopic(t, brokers, topic, 4)
	records := produceOrders(ctx, t, bin, brokers, topic, 300, 22)
	base := integration.KeyPrefix(t)
	tag := "{" + base[len(base)-9:len(base)-1] + "}"
	prefix, hash := tag+":ledger:", tag+":totals"
	runToEnd(ctx, t, bin, 0, "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", integration.Group(t),
		"--redis", strings.Join(rc.Addrs, ","), "--ledger-prefix", prefix, "--effect", "totals", "--totals-hash", hash,
		"--dlq-prefix", base)
	exp := itest.ReadTopic(ctx, t, brokers, topic, records)
	itest.CheckTotals(ctx, t, c, hash, exp)
	keys, per := itest.ClusterKeys(ctx, t, rc, c, prefix)
	if len(keys) != exp.Unique {
		t.Fatalf("ledger holds %d keys, want %d", len(keys), exp.Unique)
	}
	shard, err := rc.ShardOf(ctx, tag)
	if err != nil {
		t.Fatal(err)
	}
	if len(per) != 1 || per[shard.Master] != exp.Unique {
		t.Fatalf("ledger keys per master %v: want all %d on node %d, the master of %s's slot", per, exp.Unique, shard.Master, tag)
	}
}

func clusterGuard(t *testing.T, brokers []string, bin string, rc *clusters.Redis, c *redis.ClusterClient) {
	const orders, resends = 200, 20
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 4)
	integration.CreateDeadLetterTopic(t, brokers, topic, 4)
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.Header.Get("Idempotency-Key")]++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	cl := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	var recs []*kgo.Record
	for i := range orders + resends {
		id := fmt.Sprintf("order-%03d", i%orders)
		recs = append(recs, &kgo.Record{Key: []byte(id), Value: fmt.Appendf(nil, `{"order_id":%q}`, id)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	base := integration.KeyPrefix(t)
	prefix := base + "ledger:"
	runToEnd(ctx, t, bin, 0, "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", integration.Group(t),
		"--redis", strings.Join(rc.Addrs, ","), "--ledger-prefix", prefix, "--dlq-prefix", base+"sp:",
		"--effect", "http", "--http-url", srv.URL, "--http-timeout", "5s")
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != orders {
		t.Fatalf("calls for %d keys, want %d", len(calls), orders)
	}
	for k, n := range calls {
		if n != 1 {
			t.Fatalf("%s called %d times, want once", k, n)
		}
	}
	keys, per := itest.ClusterKeys(ctx, t, rc, c, prefix)
	if len(keys) != orders || len(per) != 3 {
		t.Fatalf("%d guard claims over masters %v, want %d spread over all three", len(keys), per, orders)
	}
	for k := range keys {
		v, err := c.Get(ctx, prefix+k).Result()
		if err != nil {
			t.Fatal(err)
		}
		cl, err := sink.DecodeClaim(v)
		if err != nil || cl.State != sink.ClaimDone {
			t.Fatalf("claim of %s: %+v (%v), want done", k, cl, err)
		}
	}
}

func clusterReplay(t *testing.T, brokers []string, bin string, rc *clusters.Redis, c *redis.ClusterClient) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 4)
	integration.CreateDeadLetterTopic(t, brokers, topic, 4)
	base := integration.KeyPrefix(t)
	e := &itest.ReplayEnv{T: t, Bin: bin, Brokers: brokers, Addr: strings.Join(rc.Addrs, ","), Rdb: c, Topic: topic,
		Prefix: "{" + base[len(base)-9:len(base)-1] + "}:"}
	e.Produce(ctx, 2000, 10, time.Now())
	code, counts, out := e.Replay(ctx, "initial", "--from", "0")
	if applied, suppressed := counts.Total(); code != 0 || applied != 2000 || suppressed != 200 {
		t.Fatalf("initial replay: exit %d applied %d suppressed %d, want 0, 2000, 200\n%s", code, applied, suppressed, out)
	}
	var lost []itest.Order
	for i, o := range e.Unique() {
		if i%7 != 0 {
			continue
		}
		lost = append(lost, o)
		if err := c.Del(ctx, e.Ledger()+o.Id).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.HIncrBy(ctx, e.Hash(), o.Customer, -o.Cents).Err(); err != nil {
			t.Fatal(err)
		}
	}
	p := itest.Start(t, "replay 1", bin, e.ReplayArgs("again", "--from", "0", "--rate", "1500", "--commit-every", "50")...)
	p.WaitLine(ctx, "replay progress", func(m map[string]any) bool { return itest.Num(m, "read") >= 600 })
	p.Signal(syscall.SIGKILL)
	p.Wait(ctx)
	ckpts, _ := itest.ClusterKeys(ctx, t, rc, c, e.Prefix+"replay:")
	if len(ckpts) == 0 {
		t.Fatalf("no replay checkpoint under %sreplay: on the cluster", e.Prefix)
	}
	code, counts, out = e.Replay(ctx, "again", "--from", "0")
	if code != 0 {
		t.Fatalf("rerun: exit %d\n%s", code, out)
	}
	resumed := int64(0)
	for _, x := range counts {
		resumed += x.Began - x.From
	}
	if resumed < 300 {
		t.Fatalf("the rerun began %d records past the range start, want it to continue from the checkpoints (>= 300)\n%s", resumed, out)
	}
	keys, _ := itest.ClusterKeys(ctx, t, rc, c, e.Ledger())
	if len(keys) != len(e.Unique()) {
		t.Fatalf("ledger holds %d keys, want %d", len(keys), len(e.Unique()))
	}
	for _, o := range lost {
		if !keys[o.Id] {
			t.Fatalf("lost order %s not restored", o.Id)
		}
	}
	e.CheckTotalsEqual(ctx, itest.TotalsOf(e.Unique()))
}
