package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestRunCarriesGuardFaults: the guard's fault points given with Run's
// context reach Guard.Do inside the pipeline (a crash after the claim, as
// the kit's guard scenarios inject it). The batch's outcome is then unknown:
// the pipeline applies it again, and the retry, a new owner to the guard,
// runs the effect once the crashed claim's lease lapsed. The points replace
// sink.WithHooks, which is no longer public API.
func TestRunCarriesGuardFaults(t *testing.T) {
	env := newFake(t, "orders", 1)
	produce(t, env.brokers, &kgo.Record{Topic: "orders", Key: []byte("pay-1"), Value: []byte(`{}`)})
	g, err := sink.NewGuard(env.rc, sink.WithPrefix("g:"), sink.WithLease(200*time.Millisecond),
		sink.WithRetry(sink.Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond, Attempts: 3}))
	if err != nil {
		t.Fatal(err)
	}
	var crashes, runs atomic.Int32
	crashed := make(chan struct{})
	points := faults.Guard{AfterClaim: func(context.Context, string) error {
		if crashes.Add(1) == 1 {
			close(crashed)
			return errors.New("injected crash after the claim")
		}
		return nil
	}}
	effect := func(context.Context, string, *sink.Record) error { runs.Add(1); return nil }
	log := watch.New()
	p, err := pipeline.New(pipeline.Brokers(env.brokers...), pipeline.Topics("orders"), pipeline.Group("g"),
		pipeline.Sink(pipeline.Guarded(g, effect)), pipeline.CommitEvery(1), pipeline.Logger(quiet()),
		pipeline.Observe(log.Observer("p")))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(faults.WithGuard(ctx, points)) }()
	select {
	case <-crashed:
	case <-ctx.Done():
		t.Fatal("the guard's AfterClaim point never ran inside the pipeline")
	}
	env.mr.FastForward(time.Second) // miniredis keeps time by hand: the crashed claim's lease lapses
	if err := log.Wait(ctx, "the payment committed", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "")[checkpoint.Partition{Topic: "orders"}] == 1
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || crashes.Load() < 2 {
		t.Fatalf("effect ran %d times after %d claims, want once after the crashed claim and the retry's", runs.Load(), crashes.Load())
	}
}

// TestCrashAfterFault: the CrashAfter point (before: the pipeline.CrashAfter
// option) kills the partition's worker after k records, their effects landed
// and nothing committed, and reports it; a CrashAfter below 1 is refused by
// Run.
func TestCrashAfterFault(t *testing.T) {
	env := newFake(t, "orders", 1)
	recs := make([]*kgo.Record, 10)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: "orders", Key: []byte{'k', byte('0' + i)}, Value: []byte(`{}`)}
	}
	produce(t, env.brokers, recs...)
	l, err := sink.NewLedger(env.rc, sink.WithPrefix("l:"))
	if err != nil {
		t.Fatal(err)
	}
	log := watch.New()
	part := checkpoint.Partition{Topic: "orders"}
	r := startFaults(t, env.brokers, l, faults.CrashAfter("orders", 0, 4, log.Crashes("p")),
		pipeline.CommitEvery(100), pipeline.CommitInterval(0))
	if err := log.Wait(r.ctx, "the injected crash", func(evs []watch.Tagged) bool { return watch.HasCrash(evs, "", part) }); err != nil {
		t.Fatal(err)
	}
	for _, e := range log.Events() {
		if e.Crashed && (e.Offset != 3 || !errors.Is(e.Err, faults.ErrInjectedCrash)) {
			t.Errorf("crash %+v, want at offset 3 wrapping ErrInjectedCrash", e)
		}
	}
	if err := r.p.Close(r.ctx); err != nil {
		t.Fatal(err)
	}
	s := r.p.Stats()[0]
	if s.Attempts != 4 || s.Committed != -1 || s.Held {
		t.Errorf("stats %+v, want 4 attempts, nothing committed, not held", s)
	}
	if n := len(env.mr.Keys()); n != 4 {
		t.Errorf("ledger holds %d keys, want the 4 records applied before the crash", n)
	}

	bad := startFaults(t, env.brokers, l, faults.CrashAfter("orders", 0, 0, nil))
	if err := <-bad.done; err == nil || !strings.Contains(err.Error(), "crash after 0 attempts") {
		t.Errorf("Run with CrashAfter 0 = %v, want it refused", err)
	}
}
