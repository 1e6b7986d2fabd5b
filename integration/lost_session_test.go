package integration_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// gate holds the first batch of each partition that reaches an offset, in a
// BeforeApply hook, until it is opened; it remembers that batch.
type gate struct {
	from    int64 // the first batch holding an offset >= from is held
	mu      sync.Mutex
	batches map[int32][]sink.Record
	reached chan int32
	open    chan struct{}
}

func newGate(from int64) *gate {
	return &gate{from: from, batches: map[int32][]sink.Record{}, reached: make(chan int32, 64), open: make(chan struct{})}
}

func (g *gate) hook(ctx context.Context, p checkpoint.Partition, _ int64, batch []sink.Record) {
	if batch[len(batch)-1].Offset < g.from {
		return
	}
	g.mu.Lock()
	_, seen := g.batches[p.Partition]
	if !seen {
		g.batches[p.Partition] = append([]sink.Record(nil), batch...)
	}
	g.mu.Unlock()
	if seen {
		return
	}
	g.reached <- p.Partition
	select {
	case <-g.open:
	case <-ctx.Done():
	}
}

// await waits until n partitions have a held batch.
func (g *gate) await(ctx context.Context, t *testing.T, n int, what string) {
	t.Helper()
	for range n {
		select {
		case <-g.reached:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
	}
}

func (g *gate) batch(p int32) []sink.Record {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.batches[p]
}

// outcomes is an Applier that keeps its Applier's answer per business key
// and says when a batch holding a given offset of a partition has its answer.
type outcomes struct {
	pipeline.Applier
	mu   sync.Mutex
	by   map[string][]sink.Outcome
	done chan sink.Record // the last record of each batch answered
}

func newOutcomes(a pipeline.Applier) *outcomes {
	return &outcomes{Applier: a, by: map[string][]sink.Outcome{}, done: make(chan sink.Record, 4096)}
}

func (o *outcomes) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	res, err := o.Applier.Apply(ctx, batch)
	if err == nil {
		o.mu.Lock()
		for _, r := range res {
			if r.Err == nil {
				o.by[r.Key] = append(o.by[r.Key], r.Outcome)
			}
		}
		o.mu.Unlock()
		select {
		case o.done <- batch[len(batch)-1]:
		default:
		}
	}
	return res, err
}

func (o *outcomes) of(key string) []sink.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.by[key]
}

// TestPartitionLostOnRealBroker: member Z's connections to the broker are
// held (its heartbeats and commits stop reaching the broker, as in a network
// partition or a frozen host) while it holds a batch on every partition, and
// the broker expires its session. B joins and is given every partition. Then:
//
//   - B starts each partition at the offset Z had committed, read from the
//     broker when Z went silent;
//   - Z, not yet told, wakes and applies its held batch: a zombie's late
//     claims, made before B reaches those records;
//   - B re-reads Z's landed records, from before the loss and from the late
//     batch: the ledger suppresses every one of them, and each order's effect
//     lands once (one claim per key naming a record that holds it; the
//     totals equal the sums over the orders);
//   - when Z's connections come back, the broker refuses its commit with the
//     protocol's code, franz-go reports the partitions lost, and Z stops them
//     without committing: B's offsets stay at the end.
func TestPartitionLostOnRealBroker(t *testing.T) {
	eachProtocol(t, 3*time.Minute, testPartitionLost)
}

func testPartitionLost(t *testing.T, ctx context.Context, env liveEnv) {
	const parts, perPart = 4, 200
	integration.CreateNamedTopic(t, env.Brokers, env.Topic, parts)
	if _, err := scenario.ProduceOrders(ctx, env.Brokers, env.Topic, parts, perPart); err != nil {
		t.Fatal(err)
	}
	hash := env.Prefix + "totals"
	newSink := func() *outcomes {
		l, err := sink.NewLedger(env.Redis, sink.WithPrefix(env.Prefix),
			sink.WithEffect(sink.Totals{Hash: hash, GroupField: "customer", AmountField: "amount_cents"}))
		if err != nil {
			t.Fatal(err)
		}
		return newOutcomes(l)
	}
	log := watch.New()
	start := func(tag string, a pipeline.Applier, g *gate, opts ...pipeline.GroupOpt) (*pipeline.Pipeline, <-chan error) {
		opts = append([]pipeline.GroupOpt{pipeline.Brokers(env.Brokers...), pipeline.Topics(env.Topic),
			pipeline.Group(env.Group), pipeline.Sink(a), pipeline.GroupProtocol(env.Protocol),
			pipeline.CommitEvery(25), pipeline.CommitInterval(0), pipeline.MaxBatch(10),
			pipeline.Observe(log.Observer(tag)), pipeline.Logger(slog.New(slog.DiscardHandler))}, opts...)
		p, err := pipeline.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- p.Run(faults.WithWorker(ctx, faults.Worker{BeforeApply: g.hook})) }()
		t.Cleanup(func() { p.Abort() })
		return p, done
	}

	// Z holds a batch reaching offset 60 on every partition: it committed up
	// to 50 and landed records past that.
	w := newWire()
	zGate, zOut := newGate(60), newSink()
	z, zDone := start("Z", zOut, zGate, pipeline.SessionTimeout(2*time.Second), pipeline.RevokeTimeout(2*time.Second),
		pipeline.KafkaOptions(kgo.Dialer(w.dial), kgo.RequestTimeoutOverhead(2*time.Minute),
			kgo.HeartbeatInterval(300*time.Millisecond)))
	zGate.await(ctx, t, parts, "Z to hold a batch on every partition")
	zMember, zEpoch := z.Client().GroupMetadata()
	w.hold()
	frozenAt := len(log.Events())
	adm := integration.NewAdmin(t, env.Brokers)
	offs, err := adm.FetchOffsets(ctx, env.Group)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	left := map[int32]int64{}
	for n := int32(0); n < parts; n++ {
		o, _ := offs.Lookup(env.Topic, n)
		left[n] = o.At
		if first := zGate.batch(n)[0].Offset; o.At <= 0 || o.At > first {
			t.Fatalf("partition %d: Z committed %d before its held batch at %d; the test needs a commit before it", n, o.At, first)
		}
	}
	t.Logf("Z (member %s, epoch %d) silenced holding batches %v; committed %v", zMember, zEpoch, heldRanges(zGate, parts), left)

	// B joins; the broker gives it the partitions once Z's session expires.
	bGate, bOut := newGate(0), newSink()
	b, bDone := start("B", bOut, bGate)
	bGate.await(ctx, t, parts, "B to be given every partition and hold its first batch")
	for n := int32(0); n < parts; n++ {
		if got := bGate.batch(n)[0].Offset; got != left[n] {
			t.Errorf("partition %d: B started at %d, the committed offset was %d", n, got, left[n])
		}
	}

	// Z wakes, unaware, and applies its held batches before B can.
	close(zGate.open)
	late := map[int32]bool{}
	for len(late) < parts {
		select {
		case r := <-zOut.done:
			for n := int32(0); n < parts; n++ {
				if hb := zGate.batch(n); r.Partition == n && r.Offset == hb[len(hb)-1].Offset {
					late[n] = true
				}
			}
		case <-ctx.Done():
			t.Fatalf("waiting for Z's late batches: %v", ctx.Err())
		}
	}
	if err := w.keptBack(ctx, 8); err != nil {
		t.Fatalf("waiting for Z's commit after its late batch: %v", err)
	}
	for n := int32(0); n < parts; n++ {
		for _, r := range zGate.batch(n) {
			if got := zOut.of(string(r.Key)); len(got) != 1 || got[0] != sink.Applied {
				t.Errorf("zombie's late claim of %s (%d@%d): %v, want applied", r.Key, n, r.Offset, got)
			}
		}
	}

	// B goes on: Z's claims must make its attempts suppressions.
	close(bGate.open)
	if err := log.Wait(ctx, "B to commit every partition to its end", func(evs []watch.Tagged) bool {
		c := watch.Committed(evs, "B")
		for n := int32(0); n < parts; n++ {
			if c[checkpoint.Partition{Topic: env.Topic, Partition: n}] != perPart {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}

	// Z's connections come back: the broker answers its held heartbeat and
	// commit, and Z learns it lost the partitions.
	if err := w.release(); err != nil {
		t.Fatal(err)
	}
	if err := log.Wait(ctx, "Z to lose every partition", func(evs []watch.Tagged) bool {
		for n := int32(0); n < parts; n++ {
			if !watch.Has(evs[frozenAt:], "Z", pipeline.Lost, checkpoint.Partition{Topic: env.Topic, Partition: n}) {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, p := range []*pipeline.Pipeline{z, b} {
		if err := p.Close(closeCtx); err != nil {
			t.Fatal(err)
		}
	}
	<-zDone
	<-bDone

	// Z after it went silent: no commit, refusals only for its stale term,
	// the broker's with the protocol's code.
	var brokerCodes []error
	for _, e := range log.Events()[frozenAt:] {
		if e.Tag != "Z" {
			continue
		}
		switch e.Kind {
		case pipeline.Committed:
			t.Errorf("Z committed %s to %d after it went silent", e.Partition, e.Offset)
		case pipeline.CommitRefused:
			var ke *kerr.Error
			if !errors.Is(e.Err, checkpoint.ErrStaleEpoch) {
				t.Errorf("Z's commit of %s refused for another reason than its stale term: %v", e.Partition, e.Err)
			} else if errors.As(e.Err, &ke) {
				brokerCodes = append(brokerCodes, ke)
			}
		}
	}
	want := kerr.UnknownMemberID // the broker removed Z when its session expired
	if len(brokerCodes) == 0 {
		t.Errorf("no commit Z held reached the broker's fence")
	}
	for _, c := range brokerCodes {
		if c != want {
			t.Errorf("the broker refused Z's held commit with %v, want %v", c, want)
		}
	}

	// B re-read what Z had landed past its commit, before the loss and
	// after it: exactly those were suppressed, per the ledger in Redis.
	ledger, err := scenario.ReadLedger(ctx, env.Redis, env.Prefix, func(k string) bool { return k == hash })
	if err != nil {
		t.Fatal(err)
	}
	keys, _, err := scenario.TopicKeys(ctx, env.Brokers, env.Topic)
	if err != nil {
		t.Fatal(err)
	}
	zLanded := map[int32]int64{}
	for k, c := range ledger.Claims {
		if keys[scenario.Pos{Partition: c.Partition, Offset: c.Offset}] != k || c.Topic != env.Topic {
			t.Errorf("ledger key %q names %s %d@%d, which does not hold it", k, c.Topic, c.Partition, c.Offset)
		}
		if c.Member == zMember && c.Offset >= left[c.Partition] {
			zLanded[c.Partition]++
		}
	}
	if len(ledger.Claims) != parts*perPart || len(ledger.Bad) != 0 {
		t.Errorf("ledger holds %d claims and %d other values, want %d claims", len(ledger.Claims), len(ledger.Bad), parts*perPart)
	}
	for _, s := range b.Stats() {
		n := s.Partition.Partition
		hb := zGate.batch(n)
		if wantLanded := hb[len(hb)-1].Offset + 1 - left[n]; zLanded[n] < wantLanded {
			t.Errorf("partition %d: the ledger holds %d claims of Z past its commit at %d, want at least %d (up to its late batch)",
				n, zLanded[n], left[n], wantLanded)
		}
		// Z's claims name the very records B re-reads (same group, another
		// term): B meets them as redelivered, does not apply them again, and
		// counts them applied once, as the owner that commits past them.
		if s.Suppressed != zLanded[n] || s.Redelivered != zLanded[n] || s.Applied != perPart-left[n] {
			t.Errorf("partition %d: B applied %d, suppressed %d (redelivered %d); Z had landed %d past the committed %d of %d",
				n, s.Applied, s.Suppressed, s.Redelivered, zLanded[n], left[n], perPart)
		}
		for _, r := range hb {
			if got := bOut.of(string(r.Key)); len(got) != 1 || got[0] != sink.Redelivered {
				t.Errorf("B's attempt at %s (%d@%d), claimed late by Z: %v, want redelivered (suppressed, Z's claim names it)", r.Key, n, r.Offset, got)
			}
		}
	}
	checkOrderTotals(ctx, t, env, hash, parts, perPart)
	ends, err := adm.FetchOffsets(ctx, env.Group)
	if err != nil {
		t.Fatal(err)
	}
	for n := int32(0); n < parts; n++ {
		if o, _ := ends.Lookup(env.Topic, n); o.At != perPart {
			t.Errorf("partition %d committed at %d at the end, want %d", n, o.At, perPart)
		}
	}
	t.Logf("B suppressed what Z had landed past its commit: %v; broker refused Z's commit with %v", zLanded, brokerCodes)
}

// heldRanges describes the gate's held batches.
func heldRanges(g *gate, parts int32) string {
	s := ""
	for n := int32(0); n < parts; n++ {
		b := g.batch(n)
		s += fmt.Sprintf(" %d@%d..%d", n, b[0].Offset, b[len(b)-1].Offset)
	}
	return s
}

// checkOrderTotals compares the totals hash with the sums over
// ProduceOrders' orders: each order's amount added exactly once.
func checkOrderTotals(ctx context.Context, t *testing.T, env liveEnv, hash string, parts int32, perPart int) {
	t.Helper()
	want := map[string]int64{}
	for n := int32(0); n < parts; n++ {
		for i := 0; i < perPart; i++ {
			want["c"+strconv.Itoa(i%7)] += int64(100 + i)
		}
	}
	got, err := env.Redis.HGetAll(ctx, hash).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("totals hold %d customers, want %d", len(got), len(want))
	}
	for c, sum := range want {
		if got[c] != strconv.FormatInt(sum, 10) {
			t.Errorf("totals[%s] = %s, want %d: an order's effect landed twice or not at all", c, got[c], sum)
		}
	}
}
