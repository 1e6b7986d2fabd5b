package pipeline_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestUnavailableEffectIsRetried: an effect whose system is down (its error
// wraps sink.ErrUnavailable: a database restarting) is retried until it
// lands, in both schedules, its attempts not counted against the record:
// with EffectAttempts(2) and dead letters configured, a record that finds
// the system down four times is applied on its fifth call, nothing is
// dead-lettered or given up, and the partition commits to its end.
func TestUnavailableEffectIsRetried(t *testing.T) {
	for _, tc := range bothSchedules(4) {
		t.Run(tc.name, func(t *testing.T) {
			env := dlqEnv(t)
			const n, down = 12, 4
			produce(t, env.brokers, keyedOrders(n, 3)...)
			e := newEffectLog()
			var calls5 atomic.Int64
			e.fail = func(_ string, off int64) error {
				if off == 5 && calls5.Add(1) <= down {
					return fmt.Errorf("db: connection refused: %w", sink.ErrUnavailable)
				}
				return nil
			}
			opts := append([]pipeline.Opt{pipeline.EffectAttempts(2), pipeline.CommitEvery(3), pipeline.DeadLetters(env.rc, "g:")}, tc.opts...)
			r := start(t, env.brokers, guardedWith(t, env, e), pipeline.Options(opts...))
			waitCommitted(t, r, n)
			if err := r.p.Close(r.ctx); err != nil {
				t.Fatal(err)
			}
			if got := calls5.Load(); got != down+1 {
				t.Errorf("offset 5 called %d times, want %d (down %d times, then applied)", got, down+1, down)
			}
			if dead := readAll(t, env.brokers, "orders.dlq"); len(dead) != 0 {
				t.Errorf("%d dead letters, want none", len(dead))
			}
			if s := r.p.Stats()[0]; s.Applied != n || s.DeadLettered != 0 || s.EffectsGivenUp != 0 {
				t.Errorf("stats %+v, want %d applied, nothing dead-lettered or given up", s, n)
			}
		})
	}
}
