package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// effectLog records what a guarded effect saw: each record key's offsets
// in call order, and the most calls running at once.
type effectLog struct {
	mu      sync.Mutex
	calls   map[string][]int64
	running int
	peak    int
	busy    map[string]bool // record keys with a call running
	overlap []string        // record keys called while a call of theirs ran
	// fail returns the effect's error for a call (nil: success).
	fail  func(recordKey string, off int64) error
	delay time.Duration
}

func newEffectLog() *effectLog {
	return &effectLog{calls: map[string][]int64{}, busy: map[string]bool{}}
}

func (e *effectLog) effect(ctx context.Context, key string, r *sink.Record) error {
	e.mu.Lock()
	rk := string(r.Key)
	e.calls[rk] = append(e.calls[rk], r.Offset)
	if e.busy[rk] {
		e.overlap = append(e.overlap, fmt.Sprintf("%s@%d", rk, r.Offset))
	}
	e.busy[rk] = true
	e.running++
	e.peak = max(e.peak, e.running)
	e.mu.Unlock()
	defer func() { e.mu.Lock(); e.running--; e.busy[rk] = false; e.mu.Unlock() }()
	if e.delay > 0 {
		select {
		case <-time.After(e.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if e.fail != nil {
		return e.fail(string(r.Key), r.Offset)
	}
	return nil
}

// keyedOrders returns n records on partition 0, record keys k0..k(keys-1)
// in turn (customers, say), each with its own business key in the header
// "order".
func keyedOrders(n, keys int) []*kgo.Record {
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Topic: "orders", Key: fmt.Appendf(nil, "k%d", i%keys), Value: fmt.Appendf(nil, "v%d", i),
			Headers: []kgo.RecordHeader{{Key: "order", Value: fmt.Appendf(nil, "order-%d", i)}}})
	}
	return rs
}

func guardedWith(t *testing.T, env fakeEnv, e *effectLog) pipeline.Applier {
	t.Helper()
	ks, err := sink.ParseKeySource("header:order")
	if err != nil {
		t.Fatal(err)
	}
	g, err := sink.NewGuard(env.rc, sink.WithPrefix("g:"), sink.WithKeySource(ks), sink.WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Guarded(g, e.effect)
}

func waitCommitted(t *testing.T, r running, want int64) {
	t.Helper()
	part := checkpoint.Partition{Topic: "orders"}
	if err := r.log.Wait(r.ctx, fmt.Sprintf("commit at %d", want), func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "")[part] == want
	}); err != nil {
		t.Fatal(err)
	}
}

// TestInFlightKeyOrder: with MaxInFlight, different keys' effects run at
// once (more than one, never more than the cap), each key's records run
// one after another in offset order, every effect runs once, and the
// partition commits to its end.
func TestInFlightKeyOrder(t *testing.T) {
	env := newFake(t, "orders", 1)
	const n, keys, capN = 120, 4, 6
	produce(t, env.brokers, keyedOrders(n, keys)...)
	e := newEffectLog()
	e.delay = 5 * time.Millisecond
	r := start(t, env.brokers, guardedWith(t, env, e), pipeline.MaxInFlight(capN), pipeline.CommitEvery(10))
	waitCommitted(t, r, n)
	if err := r.p.Close(r.ctx); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.overlap) > 0 {
		t.Fatalf("calls %v started while an earlier call of their key ran", e.overlap)
	}
	if e.peak < 2 || e.peak > capN {
		t.Fatalf("at most %d effects ran at once, want 2..%d", e.peak, capN)
	}
	for k := range keys {
		key := fmt.Sprintf("k%d", k)
		got := e.calls[key]
		if len(got) != n/keys {
			t.Fatalf("key %s: %d calls %v, want %d (once per record)", key, len(got), got, n/keys)
		}
		for i, off := range got {
			if want := int64(k + i*keys); off != want {
				t.Fatalf("key %s: calls %v, want offsets %d, %d, ... in order", key, got, k, k+keys)
			}
		}
	}
	if s := r.p.Stats()[0]; s.Applied != n || s.InFlight != 0 || s.Retrying != 0 {
		t.Fatalf("stats %+v, want %d applied, none in flight", s, n)
	}
}

// schedule is one of the pipeline's two schedules, for a test that runs
// in both.
type schedule struct {
	name string
	opts []pipeline.Opt
}

// bothSchedules are batches and MaxInFlight(inFlight).
func bothSchedules(inFlight int) []schedule {
	return []schedule{{"batches", nil}, {"in flight", []pipeline.Opt{pipeline.MaxInFlight(inFlight)}}}
}

// TestFailingKeyDoesNotBlock: in both schedules, a key whose effect always
// fails is retried EffectAttempts times per record, its records in order,
// then dead-lettered, while every other key of the partition is applied
// once; the partition commits to its end, and a rejection
// (sink.ErrRejected) is dead-lettered after one attempt. (With MaxInFlight
// the other keys go on meanwhile; a batch waits for the failing record's
// retries.)
func TestFailingKeyDoesNotBlock(t *testing.T) {
	for _, tc := range bothSchedules(8) {
		t.Run(tc.name, func(t *testing.T) {
			env := dlqEnv(t)
			const n, keys = 40, 4
			produce(t, env.brokers, keyedOrders(n, keys)...)
			e := newEffectLog()
			e.fail = func(key string, off int64) error {
				switch {
				case key == "k1":
					return errors.New("receiver: 503")
				case off == 2:
					return fmt.Errorf("receiver: 400: %w", sink.ErrRejected)
				}
				return nil
			}
			opts := append([]pipeline.Opt{pipeline.EffectAttempts(3), pipeline.CommitEvery(5), pipeline.DeadLetters(env.rc, "g:")}, tc.opts...)
			r := start(t, env.brokers, guardedWith(t, env, e), pipeline.Options(opts...))
			waitCommitted(t, r, n)
			if err := r.p.Close(r.ctx); err != nil {
				t.Fatal(err)
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			var want []int64
			for off := int64(1); off < n; off += keys {
				want = append(want, off, off, off)
			}
			if fmt.Sprint(e.calls["k1"]) != fmt.Sprint(want) {
				t.Fatalf("k1 calls %v, want each record 3 times in offset order: %v", e.calls["k1"], want)
			}
			if got := e.calls["k2"]; len(got) != n/keys || got[0] != 2 {
				t.Fatalf("k2 calls %v, want offset 2 once (rejected) and each other record once", got)
			}
			for _, k := range []string{"k0", "k3"} {
				if len(e.calls[k]) != n/keys {
					t.Fatalf("%s: %d calls, want %d", k, len(e.calls[k]), n/keys)
				}
			}
			dead := readAll(t, env.brokers, "orders.dlq")
			if len(dead) != n/keys+1 {
				t.Fatalf("%d dead letters, want %d (every k1 record and offset 2)", len(dead), n/keys+1)
			}
			s := r.p.Stats()[0]
			if s.DeadLettered != n/keys+1 || s.EffectsGivenUp != n/keys+1 || s.Applied != n-n/keys-1 {
				t.Fatalf("stats %+v, want %d dead-lettered and %d applied", s, n/keys+1, n-n/keys-1)
			}
		})
	}
}

// TestStopOnEffectFailure: in both schedules, without dead letters a record
// whose effect gives up stops the pipeline with a *RecordError wrapping
// ErrEffectFailed after EffectAttempts attempts, and the committed offset
// stays before it.
func TestStopOnEffectFailure(t *testing.T) {
	for _, tc := range bothSchedules(4) {
		t.Run(tc.name, func(t *testing.T) {
			env := newFake(t, "orders", 1)
			produce(t, env.brokers, keyedOrders(20, 4)...)
			e := newEffectLog()
			e.fail = func(_ string, off int64) error {
				if off == 9 {
					return errors.New("receiver: 500")
				}
				return nil
			}
			opts := append([]pipeline.Opt{pipeline.EffectAttempts(2), pipeline.CommitEvery(1)}, tc.opts...)
			r := start(t, env.brokers, guardedWith(t, env, e), pipeline.Options(opts...))
			err := <-r.done
			var re *pipeline.RecordError
			if !errors.As(err, &re) || !errors.Is(err, pipeline.ErrEffectFailed) || re.Offset != 9 || re.Attempts != 2 {
				t.Fatalf("Run = %v, want a RecordError at offset 9 after 2 attempts wrapping ErrEffectFailed", err)
			}
			if c := watch.Committed(r.log.Events(), "")[checkpoint.Partition{Topic: "orders"}]; c > 9 {
				t.Fatalf("committed %d, past the record that gave up (9)", c)
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			if got := e.calls["k1"]; fmt.Sprint(got) != "[1 5 9 9]" {
				t.Fatalf("k1 calls %v, want offset 9 twice", got)
			}
		})
	}
}

// gated holds the Apply of offset 5 until every other record has landed
// (the worker counted it Applied, a Meter's call made as each record
// lands), so that offset 5 lands last: counting Apply returns instead
// raced the last of them to the worker.
type gated struct {
	pipeline.Applier
	mu     sync.Mutex
	others int // records other than 5
	seen   int
	rest   chan struct{} // closed when the others landed
}

func (g *gated) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	if b[0].Offset == 5 {
		<-g.rest
	}
	return g.Applier.Apply(ctx, b)
}

// Applied counts a landed record (pipeline.Meter); offset 5 cannot land
// before the others, so the count of others closes rest.
func (g *gated) Applied(checkpoint.Partition, time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen++; g.seen == g.others {
		close(g.rest)
	}
}

func (g *gated) SinkRoundTrip(checkpoint.Partition, int, time.Duration, error) {}
func (g *gated) CommitRoundTrip(checkpoint.Partition, time.Duration, error)    {}

// TestInFlightCommitsAtEvery: with records landing out of order, commits
// fall where the commit point crosses a multiple of CommitEvery records,
// as batches make them: a partition of 20 records whose offset 5 lands
// last, with only the count trigger (no interval), is committed once, at
// its end, and never at the hole.
func TestInFlightCommitsAtEvery(t *testing.T) {
	env := newFake(t, "orders", 1)
	const n = 20
	produce(t, env.brokers, keyedOrders(n, n)...)
	g := &gated{Applier: guardedWith(t, env, newEffectLog()), others: n - 1, rest: make(chan struct{})}
	r := start(t, env.brokers, g, pipeline.MaxInFlight(n), pipeline.CommitEvery(10), pipeline.CommitInterval(0), pipeline.Measure(g))
	waitCommitted(t, r, n)
	var commits []int64
	for _, e := range r.log.Events() {
		if e.Kind == pipeline.Committed {
			commits = append(commits, e.Offset)
		}
	}
	if fmt.Sprint(commits) != fmt.Sprint([]int64{n}) {
		t.Fatalf("commits at %v, want one at %d", commits, n)
	}
}
