package pipeline_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestAppliedOnceAfterResetOffsets: with CountOnce a group that reads its
// records again after reset-offsets moved it back counts them Suppressed
// (Redelivered: the claims name them), not Applied again; each key counts
// in Applied once over the group's life. Without CountOnce the second pass
// counts them again, as PartitionStats.Applied documents.
func TestAppliedOnceAfterResetOffsets(t *testing.T) {
	for _, once := range []bool{true, false} {
		t.Run(fmt.Sprintf("CountOnce %v", once), func(t *testing.T) {
			const n = 10
			env := newFake(t, "orders", 1)
			var rs []*kgo.Record
			for i := range n {
				rs = append(rs, &kgo.Record{Topic: "orders", Key: fmt.Appendf(nil, "order-%d", i), Value: []byte("{}")})
			}
			produce(t, env.brokers, rs...)
			ledger, err := sink.NewLedger(env.rc)
			if err != nil {
				t.Fatal(err)
			}
			opts := []pipeline.GroupOpt{pipeline.CommitEvery(n), pipeline.MaxBatch(n)}
			if once {
				opts = append(opts, pipeline.CountOnce(sink.NewCommitMarks(env.rc, "t:")))
			}
			var applied, suppressed [2]int64
			for pass := range 2 {
				if pass == 1 { // reset-offsets back to the start
					cl, err := kgo.NewClient(kgo.SeedBrokers(env.brokers...))
					if err != nil {
						t.Fatal(err)
					}
					var os kadm.Offsets
					os.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 0, LeaderEpoch: -1})
					if err := kadm.NewClient(cl).CommitAllOffsets(context.Background(), "g", os); err != nil {
						t.Fatal(err)
					}
					cl.Close()
				}
				r := start(t, env.brokers, ledger, opts...)
				waitCommitted(t, r, n)
				if err := r.p.Close(r.ctx); err != nil {
					t.Fatal(err)
				}
				tot := pipeline.Totals(r.p.Stats())
				applied[pass], suppressed[pass] = tot.Applied, tot.Suppressed
			}
			want := [2]int64{n, 0}
			if !once {
				want = [2]int64{n, n} // counted again: what CountOnce is for
			}
			if applied != want || suppressed[1] != n {
				t.Fatalf("applied %v, suppressed %v; want applied %v and the second pass suppressing %d", applied, suppressed, want, n)
			}
		})
	}
}
