package pipeline_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestPoisonStorm: when failures exceed their bound (records failed for
// good with no success since, by default; or dead letters as a share of a
// window) the pipeline stops with a *RecordError wrapping ErrPoisonStorm at
// the record that exceeds it, instead of dead-lettering the whole topic.
// Nothing of a run of failures is dead-lettered, whether or not records
// succeeded before it began (a receiver that starts refusing every call);
// the committed offset stays before the run's first record, and the error
// names it.
func TestPoisonStorm(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n         int
		poison    func(i int) bool
		opts      []pipeline.DeadLetterOpt
		stopAt    int64 // the record that exceeds the bound
		dead      int   // records in the dead-letter topic
		committed int64 // the committed offset after the stop
		check     func(*pipeline.PoisonStormError) bool
	}{
		{name: "default bound, no success: nothing dead-lettered", n: 120, poison: func(int) bool { return true },
			stopAt: pipeline.DefaultDeadLetterMaxRun, dead: 0, committed: 0,
			check: func(e *pipeline.PoisonStormError) bool {
				return e.Run == pipeline.DefaultDeadLetterMaxRun+1 && e.MaxRun == pipeline.DefaultDeadLetterMaxRun && e.First == 0 && e.NoSuccess
			}},
		{name: "run after good records: held, nothing of it dead-lettered", n: 40, poison: func(i int) bool { return i >= 10 },
			opts:   []pipeline.DeadLetterOpt{pipeline.DeadLetterMaxRun(5)},
			stopAt: 15, dead: 0, committed: 10,
			check: func(e *pipeline.PoisonStormError) bool { return e.Run == 6 && e.First == 10 && !e.NoSuccess }},
		{name: "share of a window", n: 60, poison: func(i int) bool { return i%3 == 0 },
			opts:   []pipeline.DeadLetterOpt{pipeline.DeadLetterMaxRun(0), pipeline.DeadLetterMaxShare(0.2, 30)},
			stopAt: 18, dead: 6, committed: 18,
			check: func(e *pipeline.PoisonStormError) bool { return e.InWindow == 7 && e.Window == 30 && e.Run == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := dlqEnv(t)
			var rs []*kgo.Record
			for i := range tc.n {
				key := []byte(fmt.Sprintf("order-%d", i))
				if tc.poison(i) {
					key = nil
				}
				rs = append(rs, &kgo.Record{Topic: "orders", Key: key, Value: []byte(`{"customer":"c","amount_cents":1}`)})
			}
			produce(t, env.brokers, rs...)
			r := start(t, env.brokers, totalsLedger(t, env.rc), pipeline.CommitEvery(1), pipeline.PoisonAttempts(1),
				pipeline.DeadLetters(env.rc, "t:", tc.opts...))
			err := <-r.done
			requireRecordError(t, err, pipeline.ErrPoisonStorm, sink.ErrNoKey, tc.stopAt, 1)
			var st *pipeline.PoisonStormError
			if !errors.As(err, &st) || !tc.check(st) {
				t.Fatalf("Run = %v, cause %+v: not the bound's counts", err, st)
			}
			if got := len(readAll(t, env.brokers, "orders.dlq")); got != tc.dead {
				t.Fatalf("dead-letter topic holds %d records, want %d", got, tc.dead)
			}
			if c := watch.Committed(r.log.Events(), "")[checkpoint.Partition{Topic: "orders"}]; c != tc.committed {
				t.Fatalf("committed offset %d, want %d", c, tc.committed)
			}
		})
	}
}

// TestPoisonStormBoundsValidated: a negative run bound, a share outside 0..1
// or a share without a window is refused by New.
func TestPoisonStormBoundsValidated(t *testing.T) {
	env := dlqEnv(t)
	for _, o := range []pipeline.DeadLetterOpt{pipeline.DeadLetterMaxRun(-1), pipeline.DeadLetterMaxShare(1.5, 10),
		pipeline.DeadLetterMaxShare(0.1, 0)} {
		_, err := pipeline.New(pipeline.Brokers(env.brokers...), pipeline.Topics("orders"), pipeline.Group("g"),
			pipeline.Sink(totalsLedger(t, env.rc)), pipeline.DeadLetters(env.rc, "t:", o))
		if err == nil {
			t.Errorf("New accepted a bad poison bound")
		}
	}
}
