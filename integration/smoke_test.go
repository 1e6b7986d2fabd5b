package integration_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
)

// TestSmoke proves the servers are real: 1,000 keyed records on a 4-partition
// topic go through a consumer group into Redis SET NX exactly once, and a
// second pass over the same records (a new group) is fully suppressed.
func TestSmoke(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	t.Logf("kafka broker version (as reported by the broker): %s; brokers %v; redis %s",
		integration.KafkaVersion(t, brokers), brokers, addr)

	const (
		partitions = 4
		records    = 1000
	)
	topic := integration.CreateTopic(t, brokers, partitions)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Produce 1,000 records keyed by order ID; the default partitioner hashes keys (murmur2).
	producer := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	batch := make([]*kgo.Record, 0, records)
	for i := range records {
		batch = append(batch, &kgo.Record{
			Key:   fmt.Appendf(nil, "order-%04d", i),
			Value: fmt.Appendf(nil, `{"order":%d}`, i),
		})
	}
	if err := producer.ProduceSync(ctx, batch...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	perPartition := map[int32]int{}
	for _, r := range batch {
		perPartition[r.Partition]++
	}
	if len(perPartition) != partitions {
		t.Fatalf("records landed on %d partitions, want %d: %v", len(perPartition), partitions, perPartition)
	}
	t.Logf("produced %d records to %s: per partition %v", records, topic, perPartition)

	// Pass 1: a classic consumer group; every key is new.
	applied, suppressed := consumeAndApply(ctx, t, brokers, rdb, topic, prefix, records, false)
	t.Logf("pass 1 (classic group protocol): applied=%d suppressed=%d", applied, suppressed)
	if applied != records || suppressed != 0 {
		t.Fatalf("pass 1: applied=%d suppressed=%d, want applied=%d suppressed=0", applied, suppressed, records)
	}
	if n := countKeys(ctx, t, rdb, prefix); n != records {
		t.Fatalf("redis holds %d keys under %s, want %d", n, prefix, records)
	}

	// Pass 2: a new group (KIP-848 consumer protocol) reads the same records
	// from the start; the ledger suppresses every one.
	applied, suppressed = consumeAndApply(ctx, t, brokers, rdb, topic, prefix, records, true)
	t.Logf("pass 2 (KIP-848 consumer group protocol): applied=%d suppressed=%d", applied, suppressed)
	if applied != 0 || suppressed != records {
		t.Fatalf("pass 2: applied=%d suppressed=%d, want applied=0 suppressed=%d", applied, suppressed, records)
	}
}

// consumeAndApply joins a fresh consumer group, reads want records from the
// start of topic, SET NXes each record's key under prefix (pipelined per
// fetch), commits, and returns how many SETs took effect and how many were
// suppressed because the key already existed.
func consumeAndApply(ctx context.Context, t *testing.T, brokers []string, rdb redis.UniversalClient, topic, prefix string, want int, kip848 bool) (applied, suppressed int) {
	t.Helper()
	group := integration.Group(t)
	opts := []kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		// franz-go v1.22 defaults a new group to a one-minute rewind; read everything.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
	}
	if kip848 {
		opts = append(opts, kgo.ServerSideBalancer())
	}
	cl := integration.NewKafkaClient(t, brokers, opts...)
	defer cl.LeaveGroup()

	type po struct {
		p int32
		o int64
	}
	seen := map[po]bool{}
	for len(seen) < want {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("group %s: read %d of %d records before the deadline: %v", group, len(seen), want, err)
		}
		fetches.EachError(func(topic string, p int32, err error) {
			t.Fatalf("group %s: fetch %s[%d]: %v", group, topic, p, err)
		})
		var recs []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			if !seen[po{r.Partition, r.Offset}] {
				seen[po{r.Partition, r.Offset}] = true
				recs = append(recs, r)
			}
		})
		if len(recs) == 0 {
			continue
		}
		for _, ok := range setNX(ctx, t, rdb, recs, prefix) {
			if ok {
				applied++
			} else {
				suppressed++
			}
		}
		// Effects have landed; only now commit the records' offsets.
		if err := cl.CommitRecords(ctx, recs...); err != nil {
			t.Fatalf("group %s: commit: %v", group, err)
		}
	}
	if kip848 {
		// Prove the broker runs this group on the KIP-848 consumer protocol:
		// ConsumerGroupDescribe only knows consumer-protocol groups.
		adm := integration.NewAdmin(t, brokers)
		described, err := adm.DescribeConsumerGroups(ctx, group)
		if err == nil {
			err = described.Error()
		}
		if err != nil {
			t.Fatalf("group %s is not a KIP-848 consumer group: %v", group, err)
		}
		if g := described[group]; len(g.Members) != 1 {
			t.Fatalf("group %s: %d members, want 1", group, len(g.Members))
		}
	}
	return applied, suppressed
}

// setNX applies SET prefix+key topic/partition/offset NX EX 1h for every
// record in one pipeline and reports, per record, whether the SET took effect.
func setNX(ctx context.Context, t *testing.T, rdb redis.UniversalClient, recs []*kgo.Record, prefix string) []bool {
	t.Helper()
	pipe := rdb.Pipeline()
	cmds := make([]*redis.BoolCmd, len(recs))
	for i, r := range recs {
		cmds[i] = pipe.SetNX(ctx, prefix+string(r.Key), fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset), time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("redis pipeline: %v", err)
	}
	out := make([]bool, len(recs))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out
}

func countKeys(ctx context.Context, t *testing.T, rdb redis.UniversalClient, prefix string) int {
	t.Helper()
	n := 0
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("redis SCAN: %v", err)
	}
	return n
}
