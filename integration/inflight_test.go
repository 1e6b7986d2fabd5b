package integration_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// slowEffect is an external effect taking d per call, that records the most
// calls of one record key running at once (1 when the key order held).
type slowEffect struct {
	d       time.Duration
	mu      sync.Mutex
	busy    map[string]int
	overlap int
	running int
	peak    int
}

func (e *slowEffect) effect(ctx context.Context, _ string, r *sink.Record) error {
	rk := string(r.Key)
	e.mu.Lock()
	if e.busy == nil {
		e.busy = map[string]int{}
	}
	e.busy[rk]++
	e.overlap = max(e.overlap, e.busy[rk])
	e.running++
	e.peak = max(e.peak, e.running)
	e.mu.Unlock()
	defer func() { e.mu.Lock(); e.busy[rk]--; e.running--; e.mu.Unlock() }()
	select {
	case <-time.After(e.d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestInFlightCrash is the crash between effect and commit in guard mode
// with MaxInFlight 16: a worker running up to 16 external effects at once
// dies after 37 attempts, with effects landed past holes in its partition;
// the next owner resumes from the commit point, which never passed a record
// whose effect had not landed, and every order's effect ran exactly once,
// per the guard's ledger in Redis and per the calls counted.
func TestInFlightCrash(t *testing.T) {
	protocols(t, func(t *testing.T, s scenario.Setup) {
		e := &slowEffect{d: 2 * time.Millisecond}
		s.Effect = e.effect
		s.Options = []pipeline.GroupOpt{pipeline.MaxInFlight(16)}
		r := integration.CrashBeforeCommit(t.Context(), t, s, scenario.CrashConfig{})
		c := r.Crash
		t.Logf("%s peak=%d (real broker, %s protocol)", r.Line(), e.peak, s.Protocol)
		integration.RequireExactlyOnce(t, r)
		if c.CrashAttempts != scenario.SeedCrashAfter || c.Checkpoint > scenario.SeedCrashAfter {
			t.Errorf("crash figures %+v: want 37 attempts and the checkpoint at or before them", c)
		}
		if r.Applied != 1000 || r.Suppressed != c.Replayed {
			t.Errorf("applied %d suppressed %d; want 1000 and the %d records landed past the checkpoint", r.Applied, r.Suppressed, c.Replayed)
		}
		if e.peak < 2 {
			t.Errorf("at most %d effects ran at once: the concurrency was not exercised", e.peak)
		}
	})
}
