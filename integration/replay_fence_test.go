package integration_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestReplayFencedByNewerRun runs two pipeline.Replay of the same id on the
// real servers. The older one is held before its first batches until the newer one
// has acquired every partition and replayed the whole range; released, the
// older one's batch is suppressed by the ledger and its commit is refused:
// Run returns an error wrapping checkpoint.ErrStaleEpoch, and the checkpoint
// stays where the newer one put it.
func TestReplayFencedByNewerRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := itest.NewReplayEnv(t, "", 2)
	e.Produce(ctx, 400, 0, time.Now())
	ledger, ranges := e.WholeTopic(ctx)
	newReplay := func() *pipeline.Replay {
		r, err := pipeline.NewReplay("same", e.Topic, ranges, e.Rdb, pipeline.Brokers(e.Brokers...),
			pipeline.Sink(ledger), pipeline.CommitEvery(10), pipeline.CheckpointPrefix(e.Prefix+"replay:"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stall := faults.Worker{BeforeApply: func(ctx context.Context, _ checkpoint.Partition, _ int64, _ []sink.Record) {
		once.Do(func() { close(entered) })
		select { // every partition of the older replay waits
		case <-release:
		case <-ctx.Done():
		}
	}}
	older := newReplay()
	olderErr := make(chan error, 1)
	go func() { olderErr <- older.Run(faults.WithWorker(ctx, stall)) }()
	select {
	case <-entered:
	case err := <-olderErr:
		t.Fatalf("older replay ended before its first batch: %v", err)
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}

	newer := newReplay()
	if err := newer.Run(ctx); err != nil {
		t.Fatalf("newer replay: %v", err)
	}
	close(release)
	err := <-olderErr
	if !errors.Is(err, checkpoint.ErrStaleEpoch) {
		t.Fatalf("older replay returned %v, want an error wrapping checkpoint.ErrStaleEpoch", err)
	}
	t.Logf("older replay: %v", err)
	for _, p := range newer.Progress() {
		pos, err := newer.Checkpoint().Load(ctx, checkpoint.Partition{Topic: e.Topic, Partition: p.Partition})
		if err != nil {
			t.Fatal(err)
		}
		if pos.Offset != p.To || pos.Epoch != p.Epoch || p.Epoch != 2 {
			t.Fatalf("partition %d checkpoint %+v, want the newer replay's end %d at its epoch 2 (progress %+v)", p.Partition, pos, p.To, p)
		}
	}
	if n := itest.CountRedisKeys(ctx, t, e.Rdb, e.Ledger()+"*"); n != 400 {
		t.Fatalf("ledger holds %d keys, want 400", n)
	}
}
