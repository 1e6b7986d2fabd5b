package integration_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestGuardedPipelineCrashAfterClaim runs guard mode through the pipeline on
// the real broker and Redis: the first attempt at an external effect dies
// after its claim and before the effect; the pipeline retries the batch, the
// retry waits out the lease, and the effect runs exactly once.
func TestGuardedPipelineCrashAfterClaim(t *testing.T) {
	t.Parallel()
	brokers, rdb := integration.Kafka(t), integration.NewRedisClient(t, integration.Redis(t))
	topic := integration.CreateTopic(t, brokers, 1)
	prefix := integration.RedisPrefix(t, rdb)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("pay-1"), Value: []byte("{}")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	var crashedAt, lapsesAt atomic.Int64
	const lease = 500 * time.Millisecond
	crashing := faults.Guard{
		AfterClaim: func(ctx context.Context, key string) error {
			if !crashedAt.CompareAndSwap(0, time.Now().UnixNano()) {
				return nil
			}
			// When the crashed claim lapses in Redis, at the earliest: it
			// was written before this hook ran, so its lease is measured
			// from Redis's own count (PTTL), not from the crash; 1ms for
			// PTTL's rounding.
			sent := time.Now()
			pttl, err := rdb.PTTL(ctx, prefix+key).Result()
			if err != nil || pttl <= 0 {
				return fmt.Errorf("PTTL of the pending claim: %v, %w", pttl, err)
			}
			lapsesAt.Store(sent.Add(pttl - time.Millisecond).UnixNano())
			return errors.New("injected crash after claim, before the effect")
		},
	}
	g, err := sink.NewGuard(rdb, sink.WithPrefix(prefix), sink.WithLease(lease))
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	var ranAt atomic.Int64
	effect := func(context.Context, string, *sink.Record) error {
		runs.Add(1)
		ranAt.Store(time.Now().UnixNano())
		return nil
	}
	log := watch.New()
	p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(integration.Group(t)),
		pipeline.Sink(pipeline.Guarded(g, effect)), pipeline.CommitEvery(1), pipeline.Observe(log.Observer("p")))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(faults.WithGuard(ctx, crashing)) }() // the pipeline hands the points to the Guard
	if err := log.Wait(ctx, "the payment committed", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "")[checkpoint.Partition{Topic: topic}] == 1
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if crashedAt.Load() == 0 || runs.Load() != 1 {
		t.Fatalf("crashed=%v effect runs=%d, want a crash and exactly one run", crashedAt.Load() != 0, runs.Load())
	}
	// The run came only after the crashed attempt's claim lapsed in Redis
	// (the clocks are this host's: Redis runs on it).
	if early := time.Duration(lapsesAt.Load() - ranAt.Load()); early > 0 {
		t.Fatalf("effect ran %v after the crash, %v before the crashed claim's lease lapsed",
			time.Duration(ranAt.Load()-crashedAt.Load()), early)
	}
	tot := pipeline.Totals(p.Stats())
	applied, suppressed := tot.Applied, tot.Suppressed
	t.Logf("guard mode through the pipeline: effect runs=%d applied=%d suppressed=%d", runs.Load(), applied, suppressed)
}
