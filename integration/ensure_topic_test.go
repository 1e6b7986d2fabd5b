package integration_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/integration"
)

// TestEnsureTopic: on the real broker, admin.EnsureTopic refuses a missing
// topic when told no partition count, creates a missing topic and its
// dead-letter topic with the count given, and leaves an existing topic as
// it is, reporting its partitions.
func TestEnsureTopic(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	adm := integration.NewAdmin(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := integration.Topic(t)
	t.Cleanup(func() { _, _ = integration.NewAdmin(t, brokers).DeleteTopics(context.Background(), name, name+".dlq") })
	if _, err := admin.EnsureTopic(ctx, adm, name, 0, -1); !errors.Is(err, admin.ErrTopicMissing) {
		t.Fatalf("missing topic, no partitions: %v, want ErrTopicMissing", err)
	}
	e, err := admin.EnsureTopic(ctx, adm, name, 3, -1)
	if err != nil || e.Existing != 0 || !slices.Equal(e.Created, []string{name, name + ".dlq"}) {
		t.Fatalf("EnsureTopic = %+v, %v; want both created", e, err)
	}
	found, missing, err := admin.TopicPartitions(ctx, adm, name, name+".dlq")
	if err != nil || len(missing) > 0 || found[name] != 3 || found[name+".dlq"] != 3 {
		t.Fatalf("after EnsureTopic: %v missing %v (%v); want 3 partitions each", found, missing, err)
	}
	if e, err := admin.EnsureTopic(ctx, adm, name, 5, -1); err != nil || e.Existing != 3 || len(e.Created) != 0 {
		t.Fatalf("existing topic: %+v, %v; want it left with 3 partitions", e, err)
	}
}

// TestPreflight: on the real servers, admin.Preflight reports a missing
// topic on the Kafka side and an unreachable Redis on the Redis side, each
// apart, and nothing when both are ready.
func TestPreflight(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	adm := integration.NewAdmin(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := integration.Topic(t)
	t.Cleanup(func() { _, _ = integration.NewAdmin(t, brokers).DeleteTopics(context.Background(), name, name+".dlq") })
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	down := redis.NewClient(&redis.Options{Addr: integration.ClosedAddr(t), MaxRetries: -1})
	defer down.Close()
	// A Redis that does not answer is waited for until the deadline (the
	// start-up's --connect-timeout), then reported.
	dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
	defer dcancel()
	if k, r := admin.Preflight(dctx, adm, []string{name}, down, "down"); !errors.Is(k, admin.ErrTopicMissing) || !errors.Is(r, admin.ErrUnreachable) {
		t.Fatalf("missing topic, Redis down: kafka %v, redis %v; want ErrTopicMissing and ErrUnreachable", k, r)
	}
	if _, err := admin.EnsureTopic(ctx, adm, name, 1, -1); err != nil {
		t.Fatal(err)
	}
	if k, r := admin.Preflight(ctx, adm, []string{name}, rdb, ""); k != nil || r != nil {
		t.Fatalf("both ready: kafka %v, redis %v; want nil", k, r)
	}
}
