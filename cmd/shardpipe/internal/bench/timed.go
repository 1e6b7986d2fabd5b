package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// timed wraps the ledger to see effects land: it counts outcomes, notes
// when target records had landed, and in
// latency mode keeps each record's timestamp-to-landed time. It costs one
// clock read and a few atomics per batch.
type timed struct {
	inner      pipeline.Applier
	target     int64
	landed     atomic.Int64
	applied    atomic.Int64
	suppressed atomic.Int64
	assigned   startClock   // the first partition's assignment
	last       atomic.Int64 // unix nanos when target was reached
	done       chan struct{}
	once       sync.Once

	keepLatency bool
	mu          sync.Mutex
	latencies   []time.Duration
}

func newTimed(inner pipeline.Applier, target int64, keepLatency bool) *timed {
	return &timed{inner: inner, target: target, done: make(chan struct{}), keepLatency: keepLatency}
}

// Apply implements pipeline.Applier.
func (t *timed) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	res, err := t.inner.Apply(ctx, batch)
	if err != nil {
		return res, err
	}
	now := time.Now()
	var applied, suppressed int64
	for _, r := range res {
		switch {
		case r.Err != nil:
		case r.Outcome == sink.Applied:
			applied++
		default:
			suppressed++
		}
	}
	t.applied.Add(applied)
	t.suppressed.Add(suppressed)
	if t.keepLatency {
		t.mu.Lock()
		for i := range batch {
			t.latencies = append(t.latencies, now.Sub(batch[i].Timestamp))
		}
		t.mu.Unlock()
	}
	if n := t.landed.Add(int64(len(batch))); t.target > 0 && n >= t.target {
		t.once.Do(func() { t.last.Store(now.UnixNano()); close(t.done) })
	}
	return res, nil
}

// observe starts the clock at the first assignment.
func (t *timed) observe(e pipeline.Event) {
	if e.Kind == pipeline.Assigned {
		t.assigned.start()
	}
}

// seconds is the time from the first assignment to the target.
func (t *timed) seconds() float64 {
	return float64(t.last.Load()-t.assigned.nanos.Load()) / 1e9
}
