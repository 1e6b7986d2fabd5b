package itest

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

// Order is one produced order record, as the replay tests know it.
type Order struct {
	Id        string
	Customer  string
	Cents     int64
	Partition int32
	Offset    int64
	At        time.Time
}

// ReplayEnv is one replay test's servers, topic, key prefixes and binary.
type ReplayEnv struct {
	T       *testing.T
	Bin     string
	Brokers []string
	Addr    string
	Rdb     redis.UniversalClient
	Topic   string
	Prefix  string // test's Redis prefix: ledger, totals and checkpoints live under it
	Orders  []Order
}

func NewReplayEnv(t *testing.T, bin string, partitions int32) *ReplayEnv {
	t.Helper()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	rdb := integration.NewRedisClient(t, addr)
	topic := integration.CreateTopic(t, brokers, partitions)
	integration.CreateDeadLetterTopic(t, brokers, topic, partitions) // replay dead-letters poison as run does
	return &ReplayEnv{T: t, Bin: bin, Brokers: brokers, Addr: addr, Rdb: rdb,
		Topic: topic, Prefix: integration.RedisPrefix(t, rdb)}
}

func (e *ReplayEnv) Ledger() string { return e.Prefix + "ledger:" }

func (e *ReplayEnv) Hash() string { return e.Prefix + "totals" }

// Produce writes n orders keyed by ID (every dupEvery-th one sent twice when
// dupEvery > 0), timestamped at, and records where each landed.
func (e *ReplayEnv) Produce(ctx context.Context, n, dupEvery int, at time.Time) {
	e.T.Helper()
	cl := integration.NewKafkaClient(e.T, e.Brokers, kgo.DefaultProduceTopic(e.Topic))
	base := len(e.Orders)
	var recs []*kgo.Record
	var made []Order
	for i := range n {
		o := Order{Id: fmt.Sprintf("o-%06d", base+i), Customer: fmt.Sprintf("c%02d", (base+i)%17),
			Cents: int64(100 + (base+i)*7%9000), At: at}
		v := orders.Order{OrderID: o.Id, Customer: o.Customer, AmountCents: o.Cents}.JSON()
		copies := 1
		if dupEvery > 0 && i%dupEvery == 0 {
			copies = 2
		}
		for range copies {
			recs = append(recs, &kgo.Record{Key: []byte(o.Id), Value: v, Timestamp: at})
			made = append(made, o)
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		e.T.Fatalf("produce %d orders: %v", n, err)
	}
	for i, r := range recs {
		made[i].Partition, made[i].Offset = r.Partition, r.Offset
	}
	e.Orders = append(e.Orders, made...)
}

// Unique returns the first record of each order ID, sorted by ID.
func (e *ReplayEnv) Unique() []Order {
	seen := map[string]bool{}
	var out []Order
	for _, o := range e.Orders {
		if !seen[o.Id] {
			seen[o.Id] = true
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out
}

// Totals computes the exactly-once sums of orders.
func TotalsOf(orders []Order) map[string]int64 {
	m := map[string]int64{}
	for _, o := range orders {
		m[o.Customer] += o.Cents
	}
	return m
}

// ReplayArgs is a replay command line over this env's topic and ledger.
func (e *ReplayEnv) ReplayArgs(id string, extra ...string) []string {
	return append([]string{"replay", "--brokers", strings.Join(e.Brokers, ","), "--topic", e.Topic, "--id", id,
		"--redis", e.Addr, "--ledger-prefix", e.Ledger(), "--effect", "totals", "--totals-hash", e.Hash(),
		"--checkpoint-prefix", e.Prefix + "replay:", "--report-interval", "100ms", "--log-format", "json"}, extra...)
}

// PartitionCounts is a replay's "replay partition" log lines, by partition.
type PartitionCounts map[int32]struct{ Applied, Suppressed, Began, From int64 }

// Replay runs a replay process to its end and returns its exit code and
// per-partition counts.
func (e *ReplayEnv) Replay(ctx context.Context, id string, extra ...string) (int, PartitionCounts, string) {
	e.T.Helper()
	p := Start(e.T, "replay "+id, e.Bin, e.ReplayArgs(id, extra...)...)
	code := p.Wait(ctx)
	counts := PartitionCounts{}
	for m := range p.Lines {
		if m["msg"] == "replay partition" {
			counts[int32(Num(m, "partition"))] = struct{ Applied, Suppressed, Began, From int64 }{
				Num(m, "applied"), Num(m, "suppressed"), Num(m, "began"), Num(m, "from")}
		}
	}
	return code, counts, p.Output()
}

func (c PartitionCounts) Total() (applied, suppressed int64) {
	for _, x := range c {
		applied += x.Applied
		suppressed += x.Suppressed
	}
	return
}

// CheckTotalsEqual compares the totals hash with want.
func (e *ReplayEnv) CheckTotalsEqual(ctx context.Context, want map[string]int64) {
	e.T.Helper()
	got, err := e.Rdb.HGetAll(ctx, e.Hash()).Result()
	if err != nil {
		e.T.Fatalf("HGETALL: %v", err)
	}
	if len(got) != len(want) {
		e.T.Fatalf("totals hash has %d customers, want %d", len(got), len(want))
	}
	for c, sum := range want {
		if got[c] != strconv.FormatInt(sum, 10) {
			e.T.Fatalf("totals[%s] = %s, want %d", c, got[c], sum)
		}
	}
}

// LedgerKeys returns the business keys the ledger holds.
func (e *ReplayEnv) LedgerKeys(ctx context.Context) map[string]bool {
	e.T.Helper()
	out := map[string]bool{}
	it := e.Rdb.Scan(ctx, 0, e.Ledger()+"*", 1000).Iterator()
	for it.Next(ctx) {
		out[strings.TrimPrefix(it.Val(), e.Ledger())] = true
	}
	if err := it.Err(); err != nil {
		e.T.Fatal(err)
	}
	return out
}

// Snapshot returns every key under the test's prefix with its type, value
// and whether it expires, to compare Redis before and after.
func (e *ReplayEnv) Snapshot(ctx context.Context) map[string]string {
	e.T.Helper()
	out := map[string]string{}
	it := e.Rdb.Scan(ctx, 0, e.Prefix+"*", 1000).Iterator()
	for it.Next(ctx) {
		k := it.Val()
		typ := e.Rdb.Type(ctx, k).Val()
		var v string
		switch typ {
		case "string":
			v = e.Rdb.Get(ctx, k).Val()
		case "hash":
			h := e.Rdb.HGetAll(ctx, k).Val()
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
		e.T.Fatal(err)
	}
	return out
}

// RunCmd runs the binary with args and returns its exit code and output.
func RunCmd(ctx context.Context, bin string, args ...string) (int, string) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = WithoutShardpipeEnv()
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// AdminOf returns an admin client on the env's brokers.
func AdminOf(t *testing.T, e *ReplayEnv) *kadm.Client { return integration.NewAdmin(t, e.Brokers) }

// WholeTopic returns a Ledger under the test's ledger prefix and the replay
// plan of the whole topic, from offset 0 to its end now.
func (e *ReplayEnv) WholeTopic(ctx context.Context) (*sink.Ledger, []pipeline.Range) {
	e.T.Helper()
	ledger, err := sink.NewLedger(e.Rdb, sink.WithPrefix(e.Ledger()))
	if err != nil {
		e.T.Fatal(err)
	}
	ranges, err := pipeline.PlanReplay(ctx, AdminOf(e.T, e), e.Topic, nil, pipeline.AtOffset(0), pipeline.Bound{})
	if err != nil {
		e.T.Fatal(err)
	}
	return ledger, ranges
}
