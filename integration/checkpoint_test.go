package integration_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
)

// TestRedisCheckpointConcurrent: many committers with different epochs race on
// one partition in real Redis. The Lua compare-and-set must leave the highest
// epoch's highest offset, and refuse every commit the rules refuse.
func TestRedisCheckpointConcurrent(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	store := checkpoint.NewRedis(rdb, checkpoint.Prefix(integration.RedisPrefix(t, rdb)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := checkpoint.Partition{Topic: "orders", Partition: 7}
	const epochs, offsets = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, epochs)
	for e := int64(1); e <= epochs; e++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := int64(1); o <= offsets; o++ {
				err := store.Commit(ctx, p, e, o)
				if err != nil && !errors.Is(err, checkpoint.ErrStaleEpoch) {
					errs <- err // offsets only grow inside an epoch: never ErrStaleOffset
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	pos, err := store.Load(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if pos != (checkpoint.Position{Epoch: epochs, Offset: offsets}) {
		t.Fatalf("final position %+v, want epoch %d offset %d", pos, epochs, offsets)
	}
	if err := store.Commit(ctx, p, epochs, offsets-1); !errors.Is(err, checkpoint.ErrStaleOffset) {
		t.Fatalf("backwards commit = %v, want ErrStaleOffset", err)
	}
	next, err := store.Acquire(ctx, p)
	if err != nil || next.Epoch != epochs+1 || next.Offset != offsets {
		t.Fatalf("Acquire = %+v, %v", next, err)
	}
	if err := store.Commit(ctx, p, epochs, offsets+1); !errors.Is(err, checkpoint.ErrStaleEpoch) {
		t.Fatalf("commit by the superseded epoch = %v, want ErrStaleEpoch", err)
	}
}

// TestKafkaCheckpointFence: the Kafka store commits through a real group and
// refuses, before the broker sees them, commits for a released partition or
// from an older epoch.
func TestKafkaCheckpointFence(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	topic := integration.CreateTopic(t, brokers, 1)
	group := integration.Group(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	for range 30 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	assigned := make(chan struct{}, 1)
	cl := integration.NewKafkaClient(t, brokers, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}))
	go func() {
		for ctx.Err() == nil {
			if cl.PollRecords(ctx, 100).IsClientClosed() {
				return
			}
		}
	}()
	select {
	case <-assigned:
	case <-ctx.Done():
		t.Fatal("never assigned")
	}
	_, gen := cl.GroupMetadata()
	store := checkpoint.NewKafka(cl)
	p := checkpoint.Partition{Topic: topic, Partition: 0}
	store.Assign(p, int64(gen))
	if err := store.Commit(ctx, p, int64(gen), 10); err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(ctx, p, int64(gen), 10); err != nil {
		t.Fatalf("repeating a commit: %v", err)
	}
	if err := store.Commit(ctx, p, int64(gen), 9); !errors.Is(err, checkpoint.ErrStaleOffset) {
		t.Fatalf("backwards commit = %v, want ErrStaleOffset", err)
	}
	if err := store.Commit(ctx, p, int64(gen)-1, 20); !errors.Is(err, checkpoint.ErrStaleEpoch) {
		t.Fatalf("older epoch commit = %v, want ErrStaleEpoch", err)
	}
	store.Release(p, int64(gen)-1) // an older term's release is ignored
	if err := store.Commit(ctx, p, int64(gen), 12); err != nil {
		t.Fatalf("commit after an older term's release: %v", err)
	}
	store.Release(p, int64(gen))
	if err := store.Commit(ctx, p, int64(gen), 20); !errors.Is(err, checkpoint.ErrStaleEpoch) {
		t.Fatalf("commit after release = %v, want ErrStaleEpoch", err)
	}
	pos, err := store.Load(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if pos.Offset != 12 {
		t.Fatalf("broker holds offset %d, want 12: a refused commit reached it", pos.Offset)
	}
}
