package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// retrySignal is an Applier that closes retried once offset off is
// applied a second time: its poison retries have begun.
type retrySignal struct {
	pipeline.Applier
	off     int64
	once    sync.Once
	n       int
	mu      sync.Mutex
	retried chan struct{}
}

func (a *retrySignal) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	a.mu.Lock()
	for _, r := range b {
		if r.Offset == a.off {
			if a.n++; a.n == 2 {
				a.once.Do(func() { close(a.retried) })
			}
		}
	}
	a.mu.Unlock()
	return a.Applier.Apply(ctx, b)
}

// TestPoisonBackoffEndsAtStop: in batches, a poison record waiting for its
// next attempt does not hold a stop back: Close ends the waiting, the
// record fails for good at once (dead-lettered, as with MaxInFlight), the
// queue drains and the partition commits to its end, long before its
// attempts (1,000, backing off to 2s each) would be spent.
func TestPoisonBackoffEndsAtStop(t *testing.T) {
	env := dlqEnv(t)
	produce(t, env.brokers, orderRecords()...)
	app := &retrySignal{Applier: totalsLedger(t, env.rc), off: 4, retried: make(chan struct{})}
	r := start(t, env.brokers, app, pipeline.CommitEvery(100), pipeline.PoisonAttempts(1000),
		pipeline.DeadLetters(env.rc, "t:"))
	select {
	case <-app.retried:
	case err := <-r.done:
		t.Fatalf("Run ended before the poison record was retried: %v", err)
	}
	ctx, cancel := context.WithTimeout(r.ctx, 20*time.Second)
	defer cancel()
	if err := r.p.Close(ctx); err != nil {
		t.Fatalf("Close while a poison record backs off = %v, want nil", err)
	}
	s := r.p.Stats()[0]
	if s.DeadLettered != 2 || s.Applied != 8 {
		t.Fatalf("stats %+v, want the 2 poison records dead-lettered and 8 applied", s)
	}
	if c := watch.Committed(r.log.Events(), "")[checkpoint.Partition{Topic: "orders"}]; c != 10 {
		t.Fatalf("committed %d, want 10 (the end)", c)
	}
}
