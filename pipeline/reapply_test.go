package pipeline_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// lossyBarrier stands in for a sink.Durable across a Redis failover: its
// first Wait finds the primary changed and the writes gone (it deletes every
// key, as a replica that never got them would hold none), counts a loss and
// returns sink.ErrWritesLost. Every later Wait succeeds.
type lossyBarrier struct {
	mr     *miniredis.Miniredis
	losses atomic.Uint64
	once   sync.Once
}

func (b *lossyBarrier) Wait(context.Context) error {
	var lost bool
	b.once.Do(func() {
		for _, k := range b.mr.Keys() {
			b.mr.Del(k)
		}
		b.losses.Add(1)
		lost = true
	})
	if lost {
		return fmt.Errorf("%w: the test's failover", sink.ErrWritesLost)
	}
	return nil
}

func (b *lossyBarrier) Losses() uint64 { return b.losses.Load() }

// TestReapplyAfterLostWrites: when the barrier reports that ledger writes
// were lost (the ledger's Redis failed over to a replica without them),
// every partition applies its records since its last commit again before
// committing past them, so no effect is lost: in record mode every ledger
// key is there at the end. In guard mode the effects ran outside Redis:
// applying again would run them twice, so the pipeline does not, and each
// effect ran once.
func TestReapplyAfterLostWrites(t *testing.T) {
	for _, guarded := range []bool{false, true} {
		name := map[bool]string{false: "ledger", true: "guarded"}[guarded]
		t.Run(name, func(t *testing.T) {
			env := newFake(t, "orders", 2)
			var rs []*kgo.Record
			for i := range 40 {
				rs = append(rs, &kgo.Record{Topic: "orders", Partition: int32(i % 2),
					Key: fmt.Appendf(nil, "order-%d", i), Value: []byte("{}")})
			}
			produce(t, env.brokers, rs...)
			var app pipeline.Applier
			var runs sync.Map // key -> *atomic.Int32
			if guarded {
				g, err := sink.NewGuard(env.rc)
				if err != nil {
					t.Fatal(err)
				}
				// Inside ByTopic, as run's per-topic key space has it.
				app = pipeline.ByTopic(map[string]pipeline.Applier{"orders": pipeline.Guarded(g,
					func(_ context.Context, key string, _ *sink.Record) error {
						n, _ := runs.LoadOrStore(key, new(atomic.Int32))
						n.(*atomic.Int32).Add(1)
						return nil
					})})
			} else {
				l, err := sink.NewLedger(env.rc)
				if err != nil {
					t.Fatal(err)
				}
				app = l
			}
			b := &lossyBarrier{mr: env.mr}
			r := start(t, env.brokers, app, pipeline.CommitEvery(10), pipeline.CommitInterval(10*time.Millisecond),
				pipeline.BeforeCommit(b))
			if err := r.log.Wait(r.ctx, "both partitions committed to the end", func(evs []watch.Tagged) bool {
				c := watch.Committed(evs, "")
				return c[checkpoint.Partition{Topic: "orders"}] == 20 && c[checkpoint.Partition{Topic: "orders", Partition: 1}] == 20
			}); err != nil {
				t.Fatal(err)
			}
			if err := r.p.Close(r.ctx); err != nil {
				t.Fatal(err)
			}
			if b.Losses() != 1 {
				t.Fatalf("losses %d, want the barrier's one", b.Losses())
			}
			if guarded {
				for i := range 40 {
					n, ok := runs.Load(fmt.Sprintf("order-%d", i))
					if !ok || n.(*atomic.Int32).Load() != 1 {
						t.Fatalf("order-%d's effect ran %d times, want once", i, runCount(n))
					}
				}
				return
			}
			for i := range 40 {
				if !env.mr.Exists(fmt.Sprintf("shardpipe:ledger:order-%d", i)) {
					t.Fatalf("order-%d has no ledger key after the loss: committed past an effect that was lost (%d keys)",
						i, len(env.mr.Keys()))
				}
			}
		})
	}
}

func runCount(n any) int32 {
	if n == nil {
		return 0
	}
	return n.(*atomic.Int32).Load()
}
