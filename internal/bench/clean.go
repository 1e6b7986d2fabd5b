package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Clean deletes every Redis key under prefix (SCAN and UNLINK), so that a
// run holds at most a round's keys at a time.
func Clean(ctx context.Context, redisSpec, prefix string) error {
	rdb, err := NewRedis(redisSpec)
	if err != nil {
		return err
	}
	defer rdb.Close()
	iter := rdb.Scan(ctx, 0, prefix+"*", 10_000).Iterator()
	batch := make([]string, 0, 10_000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := rdb.Unlink(ctx, batch...).Err()
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return fmt.Errorf("bench: unlink %s*: %w", prefix, err)
			}
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("bench: scan %s*: %w", prefix, err)
	}
	if err := flush(); err != nil {
		return fmt.Errorf("bench: unlink %s*: %w", prefix, err)
	}
	return settle(ctx, rdb)
}

// settle waits (up to a minute) until Redis has freed what UNLINK handed to
// its background thread, so that the next mode does not share the CPU with it.
func settle(ctx context.Context, rdb *redis.Client) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		info, err := rdb.Info(ctx, "memory").Result()
		if err != nil || !strings.Contains(info, "lazyfree_pending_objects:") ||
			strings.Contains(info, "lazyfree_pending_objects:0\r") {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// DeleteTopic deletes topic.
func DeleteTopic(ctx context.Context, brokers []string, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = kadm.NewClient(cl).DeleteTopic(ctx, topic)
	return err
}
