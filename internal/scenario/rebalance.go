package scenario

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// RebalanceConfig sizes the rebalance scenario.
type RebalanceConfig struct {
	Partitions  int32 // default 8
	Orders      int   // default 20,000, produced in three equal waves
	CommitEvery int   // default 100
	Customers   int   // distinct customers in the totals hash; default 13
	// CrashLeave makes the first consumer leave as a crash would (no drain,
	// no final commit) right after a batch of the third wave landed and
	// before it was committed, instead of gracefully. Those records, and any
	// others it landed but had not committed, are replayed by the others and
	// must all be suppressed.
	// (Without CrashLeave it leaves gracefully.)
	// no final commit) instead of gracefully: its landed but uncommitted
	// records are replayed by the others and must all be suppressed.
	CrashLeave bool
}

// RebalanceResult is what the rebalance scenario measured.
type RebalanceResult struct {
	Orders     int
	Attempts   int64 // effects attempted over all consumers
	Applied    int64
	Suppressed int64
	// Replays counts the records the leaving consumer had landed past its
	// last commit: its claims in the ledger (read from Redis at the end) at
	// or past each partition's committed offset, read from the broker right
	// after it left while the other consumers held their effects back (so
	// they had committed nothing on its partitions yet). The others re-read
	// exactly these, so Suppressed must equal Replays. It is not taken from
	// the pipelines' counts.
	Replays     int64
	LedgerKeys  int  // keys under the ledger prefix at the end
	TotalsOK    bool // the totals hash equals the sums computed from the orders
	Decreases   int  // committed offsets seen going backwards (events and broker polls)
	OffsetPolls int  // broker polls that read the group's committed offsets (at least one, or Rebalance fails)
	Assigned    int  // partition assignments over the run
	Outcome
}

// Line prints the result in one line.
func (r RebalanceResult) Line() string {
	return fmt.Sprintf("orders=%d applied=%d suppressed=%d replays=%d ledger=%d totals_ok=%t offset_decreases=%d offset_polls=%d assignments=%d",
		r.Orders, r.Applied, r.Suppressed, r.Replays, r.LedgerKeys, r.TotalsOK, r.Decreases, r.OffsetPolls, r.Assigned)
}

// Rebalance runs two consumers over a topic while orders arrive in three
// waves; a third consumer joins during the second wave and the first leaves
// during the third. Every effect goes through the ledger with the totals
// effect, so the end state can be checked by arithmetic.
func Rebalance(ctx context.Context, env Env, cfg RebalanceConfig) (RebalanceResult, error) {
	cfg = cfg.withDefaults()
	res := RebalanceResult{Orders: cfg.Orders}
	if env.Log == nil {
		env.Log = watch.New()
	}
	if err := CreateTopic(ctx, env.Brokers, env.Topic, cfg.Partitions); err != nil {
		return res, err
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.DefaultProduceTopic(env.Topic))
	if err != nil {
		return res, err
	}
	defer prod.Close()
	want := map[string]int64{}
	ends := map[int32]int64{}
	wave := func(w int) error {
		per := cfg.Orders / 3
		from, to := w*per, (w+1)*per
		if w == 2 {
			to = cfg.Orders
		}
		recs := make([]*kgo.Record, 0, to-from)
		for i := from; i < to; i++ {
			id := fmt.Sprintf("order-%06d", i)
			cust := "c" + strconv.Itoa(i%cfg.Customers)
			amount := int64(100 + i%997)
			want[cust] += amount
			res.Keys = append(res.Keys, id)
			recs = append(recs, &kgo.Record{Key: []byte(id),
				Value: fmt.Appendf(nil, `{"order_id":%q,"customer":%q,"amount_cents":%d}`, id, cust, amount)})
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
	crash := newLandedGate(2 * (cfg.Orders / 3))
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
		return res, err
	}
	for _, tag := range []string{"c1", "c2"} {
		p, done, err := start(tag)
		if err != nil {
			return res, err
		}
		consumers, dones = append(consumers, p), append(dones, done)
	}
	if err := env.Log.Wait(ctx, "wave 1 committed", committedAll); err != nil {
		return res, err
	}
	if err := wave(1); err != nil {
		return res, err
	}
	p3, done3, err := start("c3") // joins while c1 and c2 work on wave 2
	if err != nil {
		return res, err
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
		return res, err
	}
	if err := wave(2); err != nil {
		return res, err
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
			return res, fmt.Errorf("waiting for c1 to land a third-wave batch: %w", ctx.Err())
		}
		consumers[0].Abort()
		if err := <-dones[0]; err != nil {
			return res, err
		}
	} else if err := closeAndWait(consumers[0], dones[0]); err != nil {
		return res, err
	}
	dones[0] = nil
	left, err := leftAt(ctx, env, cfg.Partitions)
	pause.open()
	if err != nil {
		return res, err
	}
	if err := env.Log.Wait(ctx, "wave 3 committed", committedAll); err != nil {
		return res, err
	}
	if err := stopAll(); err != nil {
		return res, err
	}
	if err := mon.stop(); err != nil {
		return res, err
	}
	res.OffsetPolls = mon.seen

	res.collect(env, consumers...)
	tot := pipeline.Totals(res.Stats)
	res.Attempts, res.Applied, res.Suppressed = tot.Attempts, tot.Applied, tot.Suppressed
	res.Decreases = mon.decreases + eventDecreases(env.Log.Events())
	for _, e := range env.Log.Events() {
		if e.Kind == pipeline.Assigned {
			res.Assigned++
		}
	}
	if res.LedgerKeys, err = countKeys(ctx, env, env.Prefix+"order-*"); err != nil {
		return res, err
	}
	ledger, err := ReadLedger(ctx, env.Redis, env.Prefix, func(k string) bool { return !env.LedgerKey(k) })
	if err != nil {
		return res, err
	}
	for _, c := range ledger.Claims {
		if at, ok := left[checkpoint.Partition{Topic: c.Topic, Partition: c.Partition}]; ok && c.Member == leaver && c.Offset >= at {
			res.Replays++
		}
	}
	got, err := env.Redis.HGetAll(ctx, hash).Result()
	if err != nil {
		return res, fmt.Errorf("read totals %s: %w", hash, err)
	}
	res.TotalsOK = len(got) == len(want)
	for cust, sum := range want {
		if got[cust] != strconv.FormatInt(sum, 10) {
			res.TotalsOK = false
		}
	}
	return res, nil
}

func (c RebalanceConfig) withDefaults() RebalanceConfig {
	if c.Partitions == 0 {
		c.Partitions = 8
	}
	if c.Orders == 0 {
		c.Orders = 20000
	}
	if c.CommitEvery == 0 {
		c.CommitEvery = 100
	}
	if c.Customers == 0 {
		c.Customers = 13
	}
	return c
}

func (env Env) totals(hash string) (pipeline.Applier, error) {
	return sink.NewLedger(env.Redis, sink.WithPrefix(env.Prefix),
		sink.WithEffect(sink.Totals{Hash: hash, GroupField: "customer", AmountField: "amount_cents"}))
}

func countKeys(ctx context.Context, env Env, match string) (int, error) {
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
func leftAt(ctx context.Context, env Env, parts int32) (map[checkpoint.Partition]int64, error) {
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
