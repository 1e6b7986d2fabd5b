package pipeline_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestBatchLandsKnownPrefix: in batch mode (Guarded, no MaxInFlight) a
// record whose effect keeps failing does not hold back the records before
// it in its batch (of 10: CommitEvery 100): they land and are committed
// (CommitInterval due) while it is retried, and
// once it succeeds the partition commits to its end, each effect run once
// successfully. A record the receiver refuses for good (sink.ErrRejected)
// is not retried: it is dead-lettered after the partition's successes.
func TestBatchLandsKnownPrefix(t *testing.T) {
	env := dlqEnv(t)
	const n = 10
	produce(t, env.brokers, keyedOrders(n, n)...) // one produce: one fetch batch
	var healed atomic.Bool
	e := newEffectLog()
	e.fail = func(_ string, off int64) error {
		switch {
		case off == 5 && !healed.Load():
			return errors.New("receiver: 503")
		case off == 7:
			return fmt.Errorf("receiver: 404: %w", sink.ErrRejected)
		}
		return nil
	}
	r := start(t, env.brokers, guardedWith(t, env, e), pipeline.CommitEvery(100), pipeline.CommitInterval(time.Millisecond),
		pipeline.DeadLetters(env.rc, "g:"))
	waitCommitted(t, r, 5) // offset 5 still failing: the records before it landed
	healed.Store(true)
	waitCommitted(t, r, n)
	if err := r.p.Close(r.ctx); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range n {
		calls := len(e.calls[fmt.Sprintf("k%d", i)])
		if i != 5 && calls != 1 {
			t.Errorf("k%d: %d calls, want 1", i, calls)
		}
	}
	if dead := readAll(t, env.brokers, "orders.dlq"); len(dead) != 1 || header(dead[0], pipeline.HeaderSourceOffset) != "7" {
		t.Fatalf("%d dead letters, want offset 7's alone", len(dead))
	}
}
