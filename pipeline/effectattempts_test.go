package pipeline_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// failTimes is an effect failure plan: offset -> the errors of its first
// calls, in order; a call past them succeeds.
type failTimes struct {
	mu    sync.Mutex
	plan  map[int64][]error
	calls map[int64]int
}

func newFailTimes(plan map[int64][]error) *failTimes {
	return &failTimes{plan: plan, calls: map[int64]int{}}
}

func (f *failTimes) fail(_ string, off int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.calls[off]
	f.calls[off]++
	if errs := f.plan[off]; n < len(errs) {
		return errs[n]
	}
	return nil
}

func (f *failTimes) called(off int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[off]
}

func times(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// TestEffectAttemptsAreTheRecords: in both schedules, a record is given up
// after EffectAttempts failures of its own effect, counted per record:
// (1) a record failing once right after the record before it failed twice
// and landed is retried, not given up (in batches the attempts were the
// batch's calls since its last progress: 3 of 3 at its first failure);
// (2) failures of unknown outcome and an effect system that is down
// (sink.ErrUnavailable) do not count (three of them and one failure of
// the effect, with EffectAttempts 2, end applied); (3) a poison record
// before a record given up does not make the given-up record run again,
// nor hold back the records after it (in batches the batch was applied
// again from its first record, forever).
func TestEffectAttemptsAreTheRecords(t *testing.T) {
	fail503 := errors.New("receiver: 503")
	down := fmt.Errorf("db: connection refused: %w", sink.ErrUnavailable)
	for _, tc := range []struct {
		name     string
		n        int
		poison   []int // offsets without a business key
		attempts int
		plan     map[int64][]error
		calls    map[int64]int // calls of these offsets' effects
		dead     int64
	}{
		{"after progress", 4, nil, 3, map[int64][]error{0: times(2, fail503), 1: times(1, fail503)},
			map[int64]int{0: 3, 1: 2, 2: 1, 3: 1}, 0},
		{"unknown outcomes not counted", 3, nil, 2, map[int64][]error{0: append(times(3, down), fail503)},
			map[int64]int{0: 5, 1: 1, 2: 1}, 0},
		{"poison before a record given up", 6, []int{0}, 2, map[int64][]error{1: times(100, fail503)},
			map[int64]int{1: 2, 2: 1, 3: 1, 4: 1, 5: 1}, 2},
	} {
		for _, sc := range bothSchedules(4) {
			t.Run(tc.name+"/"+sc.name, func(t *testing.T) {
				env := dlqEnv(t)
				recs := keyedOrders(tc.n, 2)
				for _, i := range tc.poison {
					recs[i].Headers = nil
				}
				produce(t, env.brokers, recs...)
				plan := newFailTimes(tc.plan)
				e := newEffectLog()
				e.fail = plan.fail
				// Whole batches (no CommitEvery cutting them), committed
				// once idle.
				opts := append([]pipeline.Opt{pipeline.EffectAttempts(tc.attempts), pipeline.CommitInterval(50 * time.Millisecond),
					pipeline.DeadLetters(env.rc, "g:")}, sc.opts...)
				r := start(t, env.brokers, guardedWith(t, env, e), pipeline.Options(opts...))
				waitCommitted(t, r, int64(tc.n))
				if err := r.p.Close(r.ctx); err != nil {
					t.Fatal(err)
				}
				for off, want := range tc.calls {
					if got := plan.called(off); got != want {
						t.Errorf("offset %d: effect called %d times, want %d", off, got, want)
					}
				}
				if s := r.p.Stats()[0]; s.DeadLettered != tc.dead {
					t.Errorf("stats %+v, want %d dead-lettered", s, tc.dead)
				}
			})
		}
	}
}
