package pipeline_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// countedLosses is a LossReporter whose loss count the test moves, as
// sink.Durable's moves when another partition's wait finds the primary
// changed.
type countedLosses struct{ n atomic.Uint64 }

func (c *countedLosses) Wait(context.Context) error { return nil }
func (c *countedLosses) Losses() uint64             { return c.n.Load() }

// heldAt runs the ledger's Apply and then, for the record at offset at,
// reports that its claim is written and waits for release before
// returning: the record is running, its write landed, its result not yet
// known to the worker. started receives each record's offset as its Apply
// is called.
type heldAt struct {
	pipeline.Applier
	at      int64
	written chan struct{}
	release chan struct{}
	started chan int64
	once    sync.Once
}

func (h *heldAt) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	h.started <- b[0].Offset
	res, err := h.Applier.Apply(ctx, b)
	if b[0].Offset == h.at {
		h.once.Do(func() { // the first apply; applying it again after the loss goes through
			close(h.written)
			<-h.release
		})
	}
	return res, err
}

// TestLossWhileInFlight is the engine issue's hole 1: with MaxInFlight, a
// record A whose claim landed on a primary that then failed over (its
// write lost, the loss counted by another partition's wait) while A was
// still running, and a record B started after the loss, must not let the
// commit pass A without A being applied again. On the worker before the
// fix, B's start moved the loss baseline past the loss (nothing had landed
// since the last commit), A landed, and the commit saw no loss: A's
// ledger key stayed gone and the offset was committed past it.
func TestLossWhileInFlight(t *testing.T) {
	env := newFake(t, "orders", 1)
	l, err := sink.NewLedger(env.rc)
	if err != nil {
		t.Fatal(err)
	}
	h := &heldAt{Applier: l, at: 0, written: make(chan struct{}), release: make(chan struct{}),
		started: make(chan int64, 16)}
	losses := &countedLosses{}
	produce(t, env.brokers, &kgo.Record{Topic: "orders", Key: []byte("order-a"), Value: []byte("{}")})
	r := start(t, env.brokers, h, pipeline.MaxInFlight(4), pipeline.CommitEvery(1), pipeline.BeforeCommit(losses))
	<-h.written
	// The failover: A's claim is gone from the new primary and the loss is counted.
	env.mr.Del("shardpipe:ledger:order-a")
	losses.n.Add(1)
	produce(t, env.brokers, &kgo.Record{Topic: "orders", Key: []byte("order-b"), Value: []byte("{}")})
	for off := range h.started {
		if off == 1 {
			break // B started after the loss, while A runs
		}
	}
	close(h.release)
	waitCommitted(t, r, 2)
	if !env.mr.Exists("shardpipe:ledger:order-a") {
		t.Fatal("committed past order-a (offset 0) with its ledger write lost: it was never applied again")
	}
}
