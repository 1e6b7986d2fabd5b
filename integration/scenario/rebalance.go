package scenario

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/orders"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// RebalanceConfig sizes Rebalance. Zero fields take the defaults: 8
// partitions, 20,000 records in three waves, a commit every 100 records or
// 200 ms, 13 customers.
type RebalanceConfig struct {
	Partitions int32 // partitions of the topic, default 8
	Records    int   // orders, produced in three equal waves; default 20,000
	// CommitEvery is the scenario's commit policy in records (default 100,
	// and at least every 200 ms); Setup.Options may override it.
	CommitEvery int
	// Customers is the number of distinct customers the orders' amounts
	// are summed over in the totals hash; default 13.
	Customers int
	// CrashLeave makes the leaving member die (no drain, no final commit)
	// right after a batch of the third wave landed and before it was
	// committed, instead of leaving gracefully. Those records, and any others
	// it landed but had not committed, are replayed by the others and must
	// all be suppressed.
	CrashLeave bool
}

// RebalanceFigures are Rebalance's own figures. They are read from Redis
// and the broker, not from the pipelines' counts.
type RebalanceFigures struct {
	// Records is the number of orders produced (RebalanceConfig.Records).
	Records int
	// Replays counts the records the leaving member had landed past its
	// last commit: its claims in the ledger (read from Redis at the end) at
	// or past each partition's committed offset, read from the broker right
	// after it left while the other members held their effects back (so
	// they had committed nothing on its partitions yet). The others re-read
	// exactly these, so Report.Suppressed must equal Replays (0 after a
	// graceful leave).
	Replays int64
	// Assignments counts partition assignments over the run.
	Assignments int
	// OffsetDecreases counts committed offsets seen going backwards, in the
	// pipelines' commit events and in the broker's offsets polled every
	// 20 ms during the run; it must be 0.
	OffsetDecreases int
	// OffsetPolls counts the broker polls that read the group's committed
	// offsets: at least one, or Rebalance fails (a monitor that read nothing
	// would report no decrease having checked nothing).
	OffsetPolls int
	// LedgerKeys counts the keys under the ledger prefix that name orders
	// (Prefix + "order-*") at the end.
	LedgerKeys int
	// TotalsOK is set with the default sink only (a Ledger with the totals
	// effect, no Setup.Effect or Setup.Sink): the totals hash equals the
	// per-customer sums computed from the orders produced.
	TotalsOK bool
}

// Rebalance runs members joining and leaving while records arrive: two
// consumers start on the first wave, a third joins during the second, and
// the first leaves during the third (gracefully, or as a crash with
// CrashLeave). Partitions move twice under load. Without Setup.Effect or
// Setup.Sink every effect goes through a Ledger with the totals effect, so
// the end state can be checked by arithmetic (Report.Rebalance.TotalsOK).
// About 10-20 seconds on a local broker with the defaults.
func Rebalance(ctx context.Context, s Setup, cfg RebalanceConfig) (*Report, error) {
	env, ctx, stop, err := start(ctx, s, "rebalance")
	if err != nil {
		return nil, err
	}
	defer stop()
	cfg = cfg.withDefaults()
	res := RebalanceFigures{Records: cfg.Records}
	var keys []string
	if err := createTopic(ctx, env.Brokers, env.Topic, cfg.Partitions, env.kopts...); err != nil {
		return nil, err
	}
	prod, err := kgo.NewClient(append(append([]kgo.Opt{}, env.kopts...), kgo.SeedBrokers(env.Brokers...), kgo.DefaultProduceTopic(env.Topic))...)
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	want := map[string]int64{}
	ends := map[int32]int64{}
	wave := func(w int) error {
		per := cfg.Records / 3
		from, to := w*per, (w+1)*per
		if w == 2 {
			to = cfg.Records
		}
		recs := make([]*kgo.Record, 0, to-from)
		for i := from; i < to; i++ {
			o := orders.Order{OrderID: fmt.Sprintf("order-%06d", i), Customer: "c" + strconv.Itoa(i%cfg.Customers),
				AmountCents: int64(100 + i%997)}
			want[o.Customer] += o.AmountCents
			keys = append(keys, o.OrderID)
			recs = append(recs, &kgo.Record{Key: []byte(o.OrderID), Value: o.JSON()})
		}
		results := prod.ProduceSync(ctx, recs...)
		if err := results.FirstErr(); err != nil {
			return fmt.Errorf("produce wave %d: %w", w+1, err)
		}
		for _, r := range results {
			if r.Record.Offset+1 > ends[r.Record.Partition] {
				ends[r.Record.Partition] = r.Record.Offset + 1
			}
		}
		return nil
	}
	committedAll := func(evs []watch.Tagged) bool {
		c := watch.Committed(evs, "")
		for n, end := range ends {
			if c[checkpoint.Partition{Topic: env.Topic, Partition: n}] < end {
				return false
			}
		}
		return true
	}

	mon := startMonitor(env)
	defer func() { _ = mon.stop() }()
	hash := env.totalsHash()
	crash := newLandedGate(2 * (cfg.Records / 3))
	pause := &pauseGate{}
	start := func(tag string) (*pipeline.Pipeline, <-chan error, error) {
		env := env
		outer := pause.wrap // c2 and c3 wait while c1's offsets are read
		if tag == "c1" {
			outer = func(a pipeline.Applier) pipeline.Applier { return a }
			if cfg.CrashLeave {
				outer = crash.wrap
			}
		}
		inner := env.Wrap
		env.Wrap = func(a pipeline.Applier) pipeline.Applier {
			if inner != nil {
				a = inner(a)
			}
			return outer(a)
		}
		p, err := env.consumer(tag, func() (pipeline.Applier, error) { return env.totals(hash) },
			[]pipeline.GroupOpt{pipeline.CommitEvery(cfg.CommitEvery), pipeline.CommitInterval(200 * time.Millisecond)})
		if err != nil {
			return nil, nil, err
		}
		return p, runAsync(ctx, p), nil
	}
	var consumers []*pipeline.Pipeline
	var dones []<-chan error
	stopAll := func() error {
		var first error
		for i, p := range consumers {
			if dones[i] == nil {
				continue
			}
			if err := closeAndWait(p, dones[i]); err != nil && first == nil {
				first = err
			}
			dones[i] = nil
		}
		return first
	}
	defer func() { _ = stopAll() }()

	if err := wave(0); err != nil {
		return nil, err
	}
	for _, tag := range []string{"c1", "c2"} {
		p, done, err := start(tag)
		if err != nil {
			return nil, err
		}
		consumers, dones = append(consumers, p), append(dones, done)
	}
	if err := env.Log.Wait(ctx, "wave 1 committed", committedAll); err != nil {
		return nil, err
	}
	if err := wave(1); err != nil {
		return nil, err
	}
	p3, done3, err := start("c3") // joins while c1 and c2 work on wave 2
	if err != nil {
		return nil, err
	}
	consumers, dones = append(consumers, p3), append(dones, done3)
	if err := env.Log.Wait(ctx, "c3 assigned and wave 2 committed", func(evs []watch.Tagged) bool {
		for _, e := range evs {
			if e.Tag == "c3" && e.Kind == pipeline.Assigned {
				return committedAll(evs)
			}
		}
		return false
	}); err != nil {
		return nil, err
	}
	if err := wave(2); err != nil {
		return nil, err
	}
	// From here until c1's committed offsets are read, c2 and c3 apply
	// nothing: so they commit nothing on the partitions c1 leaves them, and
	// the broker's offsets are the ones c1 left behind.
	leaver, _ := consumers[0].Client().GroupMetadata()
	pause.close()
	if cfg.CrashLeave { // c1 dies during wave 3, holding a landed, uncommitted batch
		select {
		case <-crash.landed:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for c1 to land a third-wave batch: %w", ctx.Err())
		}
		consumers[0].Abort()
		if err := <-dones[0]; err != nil {
			return nil, err
		}
	} else if err := closeAndWait(consumers[0], dones[0]); err != nil {
		return nil, err
	}
	dones[0] = nil
	left, err := leftAt(ctx, env, cfg.Partitions)
	pause.open()
	if err != nil {
		return nil, err
	}
	if err := env.Log.Wait(ctx, "wave 3 committed", committedAll); err != nil {
		return nil, err
	}
	if err := stopAll(); err != nil {
		return nil, err
	}
	if err := mon.stop(); err != nil {
		return nil, err
	}
	res.OffsetPolls = mon.seen

	var stats []pipeline.PartitionStats
	for _, p := range consumers {
		stats = append(stats, p.Stats()...)
	}
	res.OffsetDecreases = mon.decreases + eventDecreases(env.Log.Events())
	for _, e := range env.Log.Events() {
		if e.Kind == pipeline.Assigned {
			res.Assignments++
		}
	}
	if res.LedgerKeys, err = countKeys(ctx, env, env.Prefix+"order-*"); err != nil {
		return nil, err
	}
	r, err := env.finish(ctx, "rebalance", keys, stats)
	if err != nil {
		return nil, err
	}
	for _, c := range r.Ledger {
		if at, ok := left[checkpoint.Partition{Topic: c.Topic, Partition: c.Partition}]; ok && c.Member == leaver && c.Offset >= at {
			res.Replays++
		}
	}
	if env.NewSink == nil { // the default sink: a Ledger with the totals effect
		got, err := env.Redis.HGetAll(ctx, hash).Result()
		if err != nil {
			return nil, fmt.Errorf("read totals %s: %w", hash, err)
		}
		res.TotalsOK = len(got) == len(want)
		for cust, sum := range want {
			if got[cust] != strconv.FormatInt(sum, 10) {
				res.TotalsOK = false
			}
		}
	}
	r.Rebalance = &res
	return r, nil
}

func (c RebalanceConfig) withDefaults() RebalanceConfig {
	if c.Partitions == 0 {
		c.Partitions = 8
	}
	if c.Records == 0 {
		c.Records = 20000
	}
	if c.CommitEvery == 0 {
		c.CommitEvery = 100
	}
	if c.Customers == 0 {
		c.Customers = 13
	}
	return c
}

func (env runEnv) totals(hash string) (pipeline.Applier, error) {
	return sink.NewLedger(env.Redis, sink.WithPrefix(env.Prefix),
		sink.WithEffect(sink.Totals{Hash: hash, GroupField: "customer", AmountField: "amount_cents"}))
}

func countKeys(ctx context.Context, env runEnv, match string) (int, error) {
	n := 0
	iter := env.Redis.Scan(ctx, 0, match, 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	if err := iter.Err(); err != nil {
		return 0, fmt.Errorf("scan %s: %w", match, err)
	}
	return n, nil
}

// leftAt reads the committed offset of every partition from the broker (0
// for none).
func leftAt(ctx context.Context, env runEnv, parts int32) (map[checkpoint.Partition]int64, error) {
	all := make([]checkpoint.Partition, parts)
	for n := range parts {
		all[n] = checkpoint.Partition{Topic: env.Topic, Partition: n}
	}
	left, err := committed(ctx, env, all)
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		left[p] = max(left[p], 0)
	}
	return left, nil
}
