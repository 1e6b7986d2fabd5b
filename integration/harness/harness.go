// Package harness gives integration tests a real Kafka broker and a real Redis.
//
// Endpoints come, in this order, from:
//
//  1. the environment: KAFKA_BROKERS (comma-separated host:port) and REDIS_ADDR
//     (host:port), as printed by `scripts/services.sh env`;
//  2. otherwise, when a Docker engine answers, containers started once per test
//     binary with testcontainers-go (apache/kafka and redis images; the
//     testcontainers reaper removes them when the binary exits);
//  3. otherwise the test is skipped with a message that says how to start the
//     servers. With SHARDPIPE_REQUIRE_INTEGRATION=1 (set by `make test` and CI)
//     that skip is a failure instead.
//
// Every test gets its own names (Topic, Group, KeyPrefix), so tests can run in
// parallel and with -count=N against the same servers.
//
//	func TestX(t *testing.T) {
//		brokers, addr := harness.Kafka(t), harness.Redis(t)
//		topic := harness.CreateTopic(t, brokers, 4)
//		cl := harness.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
//		rdb := harness.NewRedisClient(t, addr)
//		prefix := harness.RedisPrefix(t, rdb)
//		...
//	}
package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shardpipe/shardpipe/internal/kafkainfo"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Environment variables the harness reads.
const (
	EnvKafkaBrokers = "KAFKA_BROKERS"                 // comma-separated host:port list
	EnvRedisAddr    = "REDIS_ADDR"                    // host:port
	EnvRequire      = "SHARDPIPE_REQUIRE_INTEGRATION" // "1": a missing server fails the test
	EnvKafkaImage   = "SHARDPIPE_KAFKA_IMAGE"         // Docker image override (default DefaultKafkaImage)
	EnvRedisImage   = "SHARDPIPE_REDIS_IMAGE"         // Docker image override (default DefaultRedisImage)
)

// HowTo says how to give the tests real servers; skip messages include it.
const HowTo = `start real servers from the repository root with ` +
	`'scripts/services.sh start && eval "$(scripts/services.sh env)"' and run go test again, ` +
	`or run 'make test' (starts and stops them for you), or start a Docker engine (testcontainers)`

// Kafka returns the seed brokers of a real Kafka cluster, or skips the test
// (fails it when SHARDPIPE_REQUIRE_INTEGRATION=1) when none is available.
func Kafka(t testing.TB) []string {
	t.Helper()
	if v := strings.TrimSpace(os.Getenv(EnvKafkaBrokers)); v != "" {
		return strings.Split(v, ",")
	}
	brokers, err := dockerKafka()
	if err != nil {
		unavailable(t, "Kafka", EnvKafkaBrokers+" is not set and "+err.Error())
	}
	return brokers
}

// Redis returns the host:port of a real Redis, or skips the test (fails it
// when SHARDPIPE_REQUIRE_INTEGRATION=1) when none is available.
func Redis(t testing.TB) string {
	t.Helper()
	if v := strings.TrimSpace(os.Getenv(EnvRedisAddr)); v != "" {
		return v
	}
	addr, err := dockerRedis()
	if err != nil {
		unavailable(t, "Redis", EnvRedisAddr+" is not set and "+err.Error())
	}
	return addr
}

// Required reports whether SHARDPIPE_REQUIRE_INTEGRATION=1 is set.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

func unavailable(t testing.TB, what, why string) {
	t.Helper()
	msg := fmt.Sprintf("integration test needs a real %s: %s; %s", what, why, HowTo)
	if Required() {
		t.Fatalf("%s (%s=1, so this is a failure, not a skip)", msg, EnvRequire)
	}
	t.Skip(msg)
}

// Topic returns a topic name unique to this test and this run.
func Topic(t testing.TB) string { return uniqueName(t, "sp-topic-", "-") }

// Group returns a consumer group ID unique to this test and this run.
func Group(t testing.TB) string { return uniqueName(t, "sp-group-", "-") }

// KeyPrefix returns a Redis key prefix unique to this test and this run,
// ending in ':'. See RedisPrefix for one whose keys are deleted afterwards.
func KeyPrefix(t testing.TB) string { return uniqueName(t, "sp:test:", ":") + ":" }

// uniqueName joins prefix, a sanitized form of the test name and a random
// suffix; only [a-z0-9-] is kept from the test name, which is valid in Kafka
// topic and group names and in Redis keys.
func uniqueName(t testing.TB, prefix, sep string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 80 {
		name = name[:80]
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatalf("harness: random suffix: %v", err)
	}
	return prefix + name + sep + hex.EncodeToString(rnd[:])
}

// NewKafkaClient returns a franz-go client for brokers with opts appended,
// closed when the test ends.
func NewKafkaClient(t testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatalf("harness: kgo.NewClient: %v", err)
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

// CreateDeadLetterTopic creates topic's dead-letter topic, topic+".dlq" (what
// run's default --on-poison dlq writes to), as CreateTopic does, and returns
// its name.
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

	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("harness: create topic %s with %d partitions: %v", topic, partitions, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := adm.DeleteTopic(ctx, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Errorf("harness: delete topic %s: %v", topic, err)
		}
	})

	// The controller has committed the topic; wait until the broker we talk
	// to serves metadata with a leader for every partition.
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == int(partitions) {
				ready := true
				for _, p := range td.Partitions {
					if p.Err != nil || p.Leader < 0 {
						ready = false
					}
				}
				if ready {
					return topic
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("harness: topic %s has no leader for every partition: %v (last error %v)", topic, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond): // poll interval
		}
	}
}

// NewRedisClient returns a go-redis client for addr, checked with PING and
// closed when the test ends.
func NewRedisClient(t testing.TB, addr string) redis.UniversalClient {
	t.Helper()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{addr}})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("harness: redis PING %s: %v", addr, err)
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
			t.Errorf("harness: delete keys %s*: %v", prefix, err)
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
		t.Fatalf("harness: broker version: %v", err)
	}
	return v
}

// ClosedAddr returns 127.0.0.1:N where nothing listens, for tests of
// unreachable servers.
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
