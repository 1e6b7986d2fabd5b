package integration_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// lastRecords reads topic from the start until it has n records and returns
// each partition's last record.
func lastRecords(ctx context.Context, t *testing.T, brokers []string, topic string, n int) map[int32]*kgo.Record {
	t.Helper()
	cl := integration.NewKafkaClient(t, brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	last := map[int32]*kgo.Record{}
	for seen := 0; seen < n; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s: %v", seen, n, topic, ctx.Err())
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			seen++
			if l := last[r.Partition]; l == nil || r.Offset > l.Offset {
				last[r.Partition] = r
			}
		})
	}
	return last
}

// quietLog discards the pipeline's logs.
func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestCommitLeaderEpoch: the pipeline commits each partition's offset with
// the leader epoch of the last record before it (KIP-320), so a consumer
// resuming from it can detect a truncated log; the broker reports it back.
func TestCommitLeaderEpoch(t *testing.T) {
	t.Parallel()
	const partitions, records = 3, 60
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	topic := integration.CreateTopic(t, brokers, partitions)
	group := integration.Group(t)
	rdb := integration.NewRedisClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	for i := range records {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "o-%d", i), Value: []byte("{}")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	last := lastRecords(ctx, t, brokers, topic, records)

	ledger, err := sink.NewLedger(rdb, sink.WithPrefix(integration.RedisPrefix(t, rdb)))
	if err != nil {
		t.Fatal(err)
	}
	log := watch.New()
	p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(group),
		pipeline.Sink(ledger), pipeline.CommitEvery(7), pipeline.Logger(quietLog()), pipeline.Observe(log.Observer("p")))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	if err := log.Wait(ctx, "every partition committed to its end", func(evs []watch.Tagged) bool {
		c := watch.Committed(evs, "")
		for n, r := range last {
			if c[checkpoint.Partition{Topic: topic, Partition: n}] != r.Offset+1 {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	offs, err := integration.NewAdmin(t, brokers).FetchOffsets(ctx, group)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	for n, r := range last {
		o, ok := offs.Lookup(topic, n)
		if !ok {
			t.Fatalf("partition %d: no committed offset", n)
		}
		t.Logf("partition %d: committed offset %d leader epoch %d; last record %d leader epoch %d",
			n, o.At, o.LeaderEpoch, r.Offset, r.LeaderEpoch)
		if o.At != r.Offset+1 || o.LeaderEpoch != r.LeaderEpoch {
			t.Errorf("partition %d: committed offset %d with leader epoch %d, want %d with the last record's leader epoch %d",
				n, o.At, o.LeaderEpoch, r.Offset+1, r.LeaderEpoch)
		}
	}
}
