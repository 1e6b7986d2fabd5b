package pipeline_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// firstTermApplier applies the first batch through the ledger, so that its
// claims land, and then either loses the reply (the call fails as if Redis
// answered and the answer never came) or reports it; every later call hangs
// until the term ends. after is closed when the first batch is through.
type firstTermApplier struct {
	ledger    *sink.Ledger
	loseReply bool
	after     chan struct{}
	calls     int
}

func (a *firstTermApplier) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	a.calls++
	if a.calls > 1 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	defer close(a.after)
	res, err := a.ledger.Apply(ctx, b)
	if err != nil || !a.loseReply {
		return res, err
	}
	return nil, fmt.Errorf("%w: the reply was lost", sink.ErrUnknown)
}

// TestAppliedCountedOnceAcrossOwners: a key's effect counts as applied
// exactly once over the partition's owners when the first owner's term ends
// before it commits past the record: with the reply lost (the first owner
// never learnt its claims landed) and after a crash that followed the reply.
// The next owner meets claims naming its own records under the earlier term
// (Redelivered) and the one that commits past them counts them.
func TestAppliedCountedOnceAcrossOwners(t *testing.T) {
	for _, loseReply := range []bool{true, false} {
		t.Run(map[bool]string{true: "lost reply, then owner change", false: "crash after the reply"}[loseReply], func(t *testing.T) {
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
			first := &firstTermApplier{ledger: ledger, loseReply: loseReply, after: make(chan struct{})}
			a := start(t, env.brokers, first, pipeline.CommitEvery(n+1), pipeline.CommitInterval(0), pipeline.MaxBatch(n))
			select {
			case <-first.after:
			case <-a.ctx.Done():
				t.Fatal("the first owner applied nothing")
			}
			a.p.Abort() // its term ends before any commit
			<-a.done

			b := start(t, env.brokers, ledger, pipeline.CommitEvery(n), pipeline.MaxBatch(n))
			if err := b.log.Wait(b.ctx, "the second owner to commit to the end", func(evs []watch.Tagged) bool {
				return watch.Committed(evs, "")[checkpoint.Partition{Topic: "orders"}] == n
			}); err != nil {
				t.Fatal(err)
			}
			if err := b.p.Close(b.ctx); err != nil {
				t.Fatal(err)
			}
			appliedA := pipeline.Totals(a.p.Stats()).Applied
			tb := pipeline.Totals(b.p.Stats())
			appliedB, suppressedB := tb.Applied, tb.Suppressed
			if appliedA+appliedB != n {
				t.Errorf("applied %d by the first owner + %d by the second = %d, want each of the %d keys once",
					appliedA, appliedB, appliedA+appliedB, n)
			}
			if suppressedB != n {
				t.Errorf("the second owner suppressed %d, want %d: no effect was performed again", suppressedB, n)
			}
		})
	}
}
