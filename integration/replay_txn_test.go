package integration_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestReplayTransactionalTopic replays a topic written in transactions on
// the real broker: the last offset of the range is a commit marker (a control
// record, never handed to the sink), and an aborted transaction's records lie
// inside the range. The replay must still reach its end and apply exactly the
// committed records.
func TestReplayTransactionalTopic(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := itest.NewReplayEnv(t, "", 1)
	cl := integration.NewKafkaClient(t, e.Brokers, kgo.DefaultProduceTopic(e.Topic),
		kgo.TransactionalID(e.Topic+"-txn"))
	write := func(from, n int, commit kgo.TransactionEndTry) {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := from; i < from+n; i++ {
			cl.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "t-%03d", i)}, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce: %v", err)
				}
			})
		}
		if err := cl.Flush(ctx); err != nil { // the aborted records too are written, then aborted
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	write(0, 20, kgo.TryCommit)
	write(20, 10, kgo.TryAbort)
	write(30, 20, kgo.TryCommit) // ends with a commit marker
	// EndTransaction returns once the commit is decided; the coordinator
	// writes the markers after, and the last stable offset (where a replay
	// plans its end) moves then.
	awaitStableOffset(ctx, t, e, 53)
	ledger, ranges := e.WholeTopic(ctx)
	r, err := pipeline.NewReplay("txn", e.Topic, ranges, e.Rdb, pipeline.Brokers(e.Brokers...), pipeline.Sink(ledger),
		pipeline.CheckpointPrefix(e.Prefix+"replay:"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx); err != nil {
		t.Fatalf("replay: %v", err)
	}
	p := r.Progress()[0]
	if p.To != 53 { // 50 records, 3 markers: the last offset, 52, is a commit marker
		t.Fatalf("range ends at %d, want 53", p.To)
	}
	if !p.Done || p.Applied != 40 || p.Suppressed != 0 {
		t.Fatalf("progress %+v, want done with the 40 committed records applied", p)
	}
	if n := itest.CountRedisKeys(ctx, t, e.Rdb, e.Ledger()+"t-*"); n != 40 {
		t.Fatalf("ledger holds %d keys, want the 40 committed ones", n)
	}
	for i := 20; i < 30; i++ {
		if n := itest.CountRedisKeys(ctx, t, e.Rdb, fmt.Sprintf("%st-%03d", e.Ledger(), i)); n != 0 {
			t.Fatalf("aborted record t-%03d was applied", i)
		}
	}
}

// awaitStableOffset waits until partition 0 of e's topic has its last
// stable offset at want (the transaction markers written).
func awaitStableOffset(ctx context.Context, t *testing.T, e *itest.ReplayEnv, want int64) {
	t.Helper()
	adm := itest.AdminOf(t, e)
	for {
		ends, err := adm.ListCommittedOffsets(ctx, e.Topic)
		if err == nil {
			if o, ok := ends.Lookup(e.Topic, 0); ok && o.Err == nil && o.Offset >= want {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the last stable offset of %s/0 never reached %d: %v", e.Topic, want, err)
		case <-time.After(20 * time.Millisecond): // polls the broker; no event to wait on
		}
	}
}
