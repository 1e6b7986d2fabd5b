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
// whose effect had not landed, suppresses exactly the records landed past
// it, and every order's effect ran exactly once, per the guard's ledger in
// Redis and per the calls counted.
func TestInFlightCrash(t *testing.T) {
	protocols(t, func(t *testing.T, s scenario.Setup) {
		e := &slowEffect{d: 2 * time.Millisecond}
		s.Effect = e.effect
		// Records land out of order: a commit falls where the commit point
		// crosses a multiple of CommitEvery, maybe past it, so a term resumed
		// there needs the interval to commit its tail.
		s.Options = []pipeline.GroupOpt{pipeline.MaxInFlight(16), pipeline.CommitInterval(100 * time.Millisecond)}
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

// TestInFlightRebalance is TestRebalance with MaxInFlight 16 in record mode
// (the totals effect): a third consumer joins mid-stream and one leaves as
// a crash, while each partition has many records in flight. Every order is
// applied exactly once (ledger and totals agree), the pipelines suppressed
// exactly the records the crashed member had landed past its committed
// offsets, and no committed offset decreased.
func TestInFlightRebalance(t *testing.T) {
	protocols(t, func(t *testing.T, s scenario.Setup) {
		s.Options = []pipeline.GroupOpt{pipeline.MaxInFlight(16)}
		r := integration.Rebalance(t.Context(), t, s, scenario.RebalanceConfig{CrashLeave: true})
		f := r.Rebalance
		t.Logf("%s (%s)", r.Line(), s.Protocol)
		integration.RequireExactlyOnce(t, r)
		if !f.TotalsOK || len(r.Ledger) != len(r.Keys) || r.Applied != int64(len(r.Keys)) {
			t.Errorf("totals ok %v, ledger %d, applied %d; want true and %d", f.TotalsOK, len(r.Ledger), r.Applied, len(r.Keys))
		}
		if r.Suppressed != f.Replays || f.OffsetDecreases != 0 {
			t.Errorf("suppressed %d, replays %d, offset decreases %d; want suppressed = replays and no decrease",
				r.Suppressed, f.Replays, f.OffsetDecreases)
		}
	})
}

// TestInFlightZombie is TestZombie with MaxInFlight 8: consumer A stalls
// while effects are in flight on its partitions, is fenced for those that
// move to B, and wakes: its late effects are suppressed by the ledger and
// none of its commits lands.
func TestInFlightZombie(t *testing.T) {
	protocols(t, func(t *testing.T, s scenario.Setup) {
		s.Options = []pipeline.GroupOpt{pipeline.MaxInFlight(8)}
		r := integration.Zombie(t.Context(), t, s, scenario.ZombieConfig{})
		z := r.Zombie
		t.Logf("%s moved=%v zombie: attempts=%d applied=%d suppressed=%d fenced=%d", r, z.Moved, z.ZombieAttempts,
			z.ZombieApplied, z.ZombieSuppressed, z.ZombieFenced)
		integration.RequireExactlyOnce(t, r)
		if z.ZombieAttempts == 0 || z.ZombieApplied != 0 || z.ZombieSuppressed != z.ZombieAttempts ||
			z.ZombieFenced < int64(len(z.Moved)) {
			t.Errorf("the zombie's late effects were not all suppressed and fenced: %+v", z)
		}
	})
}
