package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestStormHoldsWithoutSuccess: a configuration that no record satisfies
// dead-letters nothing and commits nothing: every record that fails for
// good (a poison record after its attempts, an effect refused in flight)
// is held while its partition has seen no success, the bound counts over
// the pipeline's partitions, and the record that exceeds it stops the
// pipeline with ErrPoisonStorm (NoSuccess). A success releases what its
// partition held: dead-lettered in offset order, committed past.
func TestStormHoldsWithoutSuccess(t *testing.T) {
	refuseAll := func(string, int64) error { return fmt.Errorf("receiver: 404: %w", sink.ErrRejected) }
	for _, tc := range []struct {
		name       string
		partitions int32
		n          int // records per partition
		poison     func(i int) bool
		refuse     func(string, int64) error // the effect's answer, in flight; nil: the totals ledger
		bound      int
		wantRun    int   // PoisonStormError.Run at least (partitions fail at once); 0: no storm
		wantDead   int64 // dead letters over the topic
		committed  int64 // committed offset of each partition
	}{
		{name: "key typo over 4 partitions", partitions: 4, n: 30, poison: func(int) bool { return true },
			bound: 20, wantRun: 21, wantDead: 0, committed: 0},
		{name: "effect refused for every call, in flight", partitions: 1, n: 40, refuse: refuseAll,
			bound: 10, wantRun: 11, wantDead: 0, committed: 0},
		{name: "held until a success", partitions: 1, n: 10, poison: func(i int) bool { return i < 3 },
			bound: 5, wantDead: 3, committed: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := dlqEnvOf(t, tc.partitions, "orders", "orders.dlq")
			var rs []*kgo.Record
			for p := range tc.partitions {
				for i := range tc.n {
					key := fmt.Appendf(nil, "order-%d-%d", p, i)
					if tc.poison != nil && tc.poison(i) {
						key = nil
					}
					rs = append(rs, &kgo.Record{Topic: "orders", Partition: p, Key: key, Value: []byte(`{"customer":"c","amount_cents":1}`),
						Headers: []kgo.RecordHeader{{Key: "order", Value: fmt.Appendf(nil, "order-%d-%d", p, i)}}})
				}
			}
			produce(t, env.brokers, rs...)
			var app pipeline.Applier = totalsLedger(t, env.rc)
			opts := []pipeline.GroupOpt{pipeline.CommitEvery(1), pipeline.PoisonAttempts(1),
				pipeline.DeadLetters(env.rc, "t:", pipeline.DeadLetterMaxRun(tc.bound))}
			if tc.refuse != nil {
				e := newEffectLog()
				e.fail = tc.refuse
				app = guardedWith(t, env, e)
				opts = append(opts, pipeline.MaxInFlight(4), pipeline.EffectAttempts(2))
			}
			r := start(t, env.brokers, app, opts...)
			if tc.wantRun > 0 {
				err := <-r.done
				var st *pipeline.PoisonStormError
				if !errors.Is(err, pipeline.ErrPoisonStorm) || !errors.As(err, &st) || st.Run < tc.wantRun || !st.NoSuccess {
					t.Fatalf("Run = %v (cause %+v), want ErrPoisonStorm with Run %d or more and NoSuccess", err, st, tc.wantRun)
				}
			} else {
				waitCommitted(t, r, tc.committed)
				if err := r.p.Close(r.ctx); err != nil {
					t.Fatal(err)
				}
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(env.brokers...))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			adm := kadm.NewClient(cl)
			ends, err := adm.ListEndOffsets(context.Background(), "orders.dlq")
			if err != nil {
				t.Fatal(err)
			}
			var dead int64
			ends.Each(func(o kadm.ListedOffset) { dead += o.Offset })
			if dead != tc.wantDead {
				t.Fatalf("%d dead letters, want %d", dead, tc.wantDead)
			}
			for part, off := range watch.Committed(r.log.Events(), "") {
				if off != tc.committed {
					t.Errorf("%s committed at %d, want %d", part, off, tc.committed)
				}
			}
			if tc.wantDead > 0 {
				for i, d := range readAll(t, env.brokers, "orders.dlq") {
					if got := header(d, pipeline.HeaderSourceOffset); got != fmt.Sprint(i) {
						t.Errorf("dead letter %d is of offset %s, want %d (offset order)", i, got, i)
					}
				}
			}
		})
	}
}
