package integration_test

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/orders"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// order is one produced order record, as the replay tests know it.
type order struct {
	id        string
	customer  string
	cents     int64
	partition int32
	offset    int64
	at        time.Time
}

// replayEnv is one replay test's servers, topic, key prefixes and binary.
type replayEnv struct {
	t       *testing.T
	bin     string
	brokers []string
	addr    string
	rdb     redis.UniversalClient
	topic   string
	prefix  string // test's Redis prefix: ledger, totals and checkpoints live under it
	orders  []order
}

func newReplayEnv(t *testing.T, bin string, partitions int32) *replayEnv {
	t.Helper()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	rdb := integration.NewRedisClient(t, addr)
	topic := integration.CreateTopic(t, brokers, partitions)
	integration.CreateDeadLetterTopic(t, brokers, topic, partitions) // replay dead-letters poison as run does
	return &replayEnv{t: t, bin: bin, brokers: brokers, addr: addr, rdb: rdb,
		topic: topic, prefix: integration.RedisPrefix(t, rdb)}
}

func (e *replayEnv) ledger() string { return e.prefix + "ledger:" }
func (e *replayEnv) hash() string   { return e.prefix + "totals" }

// produce writes n orders keyed by ID (every dupEvery-th one sent twice when
// dupEvery > 0), timestamped at, and records where each landed.
func (e *replayEnv) produce(ctx context.Context, n, dupEvery int, at time.Time) {
	e.t.Helper()
	cl := integration.NewKafkaClient(e.t, e.brokers, kgo.DefaultProduceTopic(e.topic))
	base := len(e.orders)
	var recs []*kgo.Record
	var made []order
	for i := range n {
		o := order{id: fmt.Sprintf("o-%06d", base+i), customer: fmt.Sprintf("c%02d", (base+i)%17),
			cents: int64(100 + (base+i)*7%9000), at: at}
		v := orders.Order{OrderID: o.id, Customer: o.customer, AmountCents: o.cents}.JSON()
		copies := 1
		if dupEvery > 0 && i%dupEvery == 0 {
			copies = 2
		}
		for range copies {
			recs = append(recs, &kgo.Record{Key: []byte(o.id), Value: v, Timestamp: at})
			made = append(made, o)
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		e.t.Fatalf("produce %d orders: %v", n, err)
	}
	for i, r := range recs {
		made[i].partition, made[i].offset = r.Partition, r.Offset
	}
	e.orders = append(e.orders, made...)
}

// unique returns the first record of each order ID, sorted by ID.
func (e *replayEnv) unique() []order {
	seen := map[string]bool{}
	var out []order
	for _, o := range e.orders {
		if !seen[o.id] {
			seen[o.id] = true
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// totals computes the exactly-once sums of orders.
func totalsOf(orders []order) map[string]int64 {
	m := map[string]int64{}
	for _, o := range orders {
		m[o.customer] += o.cents
	}
	return m
}

// replayArgs is a replay command line over this env's topic and ledger.
func (e *replayEnv) replayArgs(id string, extra ...string) []string {
	return append([]string{"replay", "--brokers", strings.Join(e.brokers, ","), "--topic", e.topic, "--id", id,
		"--redis", e.addr, "--ledger-prefix", e.ledger(), "--effect", "totals", "--totals-hash", e.hash(),
		"--checkpoint-prefix", e.prefix + "replay:", "--report-interval", "100ms", "--log-format", "json"}, extra...)
}

// partitionCounts is a replay's "replay partition" log lines, by partition.
type partitionCounts map[int32]struct{ applied, suppressed, began, from int64 }

// replay runs a replay process to its end and returns its exit code and
// per-partition counts.
func (e *replayEnv) replay(ctx context.Context, id string, extra ...string) (int, partitionCounts, string) {
	e.t.Helper()
	p := start(e.t, "replay "+id, e.bin, e.replayArgs(id, extra...)...)
	code := p.wait(ctx)
	counts := partitionCounts{}
	for m := range p.lines {
		if m["msg"] == "replay partition" {
			counts[int32(num(m, "partition"))] = struct{ applied, suppressed, began, from int64 }{
				num(m, "applied"), num(m, "suppressed"), num(m, "began"), num(m, "from")}
		}
	}
	return code, counts, p.output()
}

func (c partitionCounts) total() (applied, suppressed int64) {
	for _, x := range c {
		applied += x.applied
		suppressed += x.suppressed
	}
	return
}

// checkTotalsEqual compares the totals hash with want.
func (e *replayEnv) checkTotalsEqual(ctx context.Context, want map[string]int64) {
	e.t.Helper()
	got, err := e.rdb.HGetAll(ctx, e.hash()).Result()
	if err != nil {
		e.t.Fatalf("HGETALL: %v", err)
	}
	if len(got) != len(want) {
		e.t.Fatalf("totals hash has %d customers, want %d", len(got), len(want))
	}
	for c, sum := range want {
		if got[c] != strconv.FormatInt(sum, 10) {
			e.t.Fatalf("totals[%s] = %s, want %d", c, got[c], sum)
		}
	}
}

// ledgerKeys returns the business keys the ledger holds.
func (e *replayEnv) ledgerKeys(ctx context.Context) map[string]bool {
	e.t.Helper()
	out := map[string]bool{}
	it := e.rdb.Scan(ctx, 0, e.ledger()+"*", 1000).Iterator()
	for it.Next(ctx) {
		out[strings.TrimPrefix(it.Val(), e.ledger())] = true
	}
	if err := it.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// snapshot returns every key under the test's prefix with its type, value
// and whether it expires, to compare Redis before and after.
func (e *replayEnv) snapshot(ctx context.Context) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	it := e.rdb.Scan(ctx, 0, e.prefix+"*", 1000).Iterator()
	for it.Next(ctx) {
		k := it.Val()
		typ := e.rdb.Type(ctx, k).Val()
		var v string
		switch typ {
		case "string":
			v = e.rdb.Get(ctx, k).Val()
		case "hash":
			h := e.rdb.HGetAll(ctx, k).Val()
			fs := make([]string, 0, len(h))
			for f, x := range h {
				fs = append(fs, f+"="+x)
			}
			sort.Strings(fs)
			v = strings.Join(fs, ",")
		default:
			v = "?"
		}
		out[k] = typ + ":" + v
	}
	if err := it.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// runCmd runs the binary with args and returns its exit code and output.
func runCmd(ctx context.Context, bin string, args ...string) (int, string) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = withoutShardpipeEnv()
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// adminOf returns an admin client on the env's brokers.
func adminOf(t *testing.T, e *replayEnv) *kadm.Client { return integration.NewAdmin(t, e.brokers) }

// wholeTopic returns a Ledger under the test's ledger prefix and the replay
// plan of the whole topic, from offset 0 to its end now.
func (e *replayEnv) wholeTopic(ctx context.Context) (*sink.Ledger, []pipeline.Range) {
	e.t.Helper()
	ledger, err := sink.NewLedger(e.rdb, sink.WithPrefix(e.ledger()))
	if err != nil {
		e.t.Fatal(err)
	}
	ranges, err := pipeline.PlanReplay(ctx, adminOf(e.t, e), e.topic, nil, pipeline.AtOffset(0), pipeline.Bound{})
	if err != nil {
		e.t.Fatal(err)
	}
	return ledger, ranges
}
