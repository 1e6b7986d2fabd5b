package integration

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/kafkainfo"
	"github.com/shardpipe/shardpipe/internal/topics"
	"github.com/shardpipe/shardpipe/secure"
)

// NewKafkaClient returns a franz-go client for brokers with opts appended,
// closed when the test ends.
func NewKafkaClient(t testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatalf("integration: kgo.NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// NewAdmin returns a kadm admin client for brokers, closed when the test ends.
func NewAdmin(t testing.TB, brokers []string) *kadm.Client {
	t.Helper()
	return kadm.NewClient(NewKafkaClient(t, brokers))
}

// CreateTopic creates a topic unique to this test with the given number of
// partitions (replication factor 1), waits until every partition has a
// leader, and deletes the topic when the test ends.
func CreateTopic(t testing.TB, brokers []string, partitions int32) string {
	t.Helper()
	return CreateNamedTopic(t, brokers, Topic(t), partitions)
}

// CreateDeadLetterTopic creates topic's dead-letter topic, topic+".dlq" (where
// run's default --on-poison dlq writes), as CreateTopic does, and returns its
// name.
func CreateDeadLetterTopic(t testing.TB, brokers []string, topic string, partitions int32) string {
	t.Helper()
	return CreateNamedTopic(t, brokers, topic+".dlq", partitions)
}

// CreateNamedTopic is CreateTopic with a name of the caller's choice.
func CreateNamedTopic(t testing.TB, brokers []string, topic string, partitions int32) string {
	t.Helper()
	adm := NewAdmin(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	created, err := topics.Create(ctx, adm, topics.Spec{Name: topic, Partitions: partitions})
	if created {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := adm.DeleteTopic(ctx, topic)
			if err == nil {
				err = resp.Err
			}
			if err != nil {
				t.Errorf("integration: delete topic %s: %v", topic, err)
			}
		})
	}
	if err != nil {
		t.Fatalf("integration: %v", err)
	}
	return topic
}

// NewRedisClient returns a go-redis client for addr, checked with PING and
// closed when the test ends.
func NewRedisClient(t testing.TB, addr string) redis.UniversalClient {
	t.Helper()
	return newRedisClient(t, addr, secure.Redis{})
}

// newRedisClient is NewRedisClient with TLS and an ACL user.
func newRedisClient(t testing.TB, addr string, sec secure.Redis) redis.UniversalClient {
	t.Helper()
	o := &redis.UniversalOptions{Addrs: []string{addr}}
	if err := sec.ApplyUniversal(o); err != nil {
		t.Fatalf("integration: redis settings: %v", err)
	}
	rdb := redis.NewUniversalClient(o)
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("integration: redis PING %s: %v", addr, err)
	}
	return rdb
}

// RedisPrefix returns a KeyPrefix and deletes every key under it when the
// test ends, so repeated runs do not pile up keys.
func RedisPrefix(t testing.TB, rdb redis.UniversalClient) string {
	t.Helper()
	prefix := KeyPrefix(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := DeleteKeys(ctx, rdb, prefix); err != nil {
			t.Errorf("integration: delete keys %s*: %v", prefix, err)
		}
	})
	return prefix
}

// DeleteKeys deletes every key that starts with prefix (SCAN + UNLINK).
func DeleteKeys(ctx context.Context, rdb redis.UniversalClient, prefix string) error {
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			if err := rdb.Unlink(ctx, batch...).Err(); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return rdb.Unlink(ctx, batch...).Err()
	}
	return nil
}

// KafkaVersion returns the broker version as the brokers report it in
// ApiVersions (see internal/kafkainfo), for example
// "broker 1: kafka v4.4 (metadata.version level 33)".
func KafkaVersion(t testing.TB, brokers []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := kafkainfo.BrokerVersion(ctx, NewAdmin(t, brokers))
	if err != nil {
		t.Fatalf("integration: broker version: %v", err)
	}
	return v
}

// ClosedAddr returns 127.0.0.1:N where nothing listens, for tests of
// unreachable servers. Nothing holds the port afterwards: a test that binds
// a server to it must expect it taken meanwhile and, on a bind failure,
// pick another (or, for a restart on the same port, wait for it).
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// deleteTopic deletes topic if it exists, reporting other failures.
func deleteTopic(t testing.TB, brokers []string, topic string, opts ...kgo.Opt) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(NewKafkaClient(t, brokers, opts...)).DeleteTopics(ctx, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("integration: delete topic %s: %v", topic, err)
	}
}
