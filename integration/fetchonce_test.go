package integration_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// fetchCounter counts the records franz-go decodes from fetch responses.
type fetchCounter struct{ n atomic.Int64 }

func (f *fetchCounter) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	f.n.Add(int64(m.NumRecords))
}

// TestPauseFetchesOnce: on the real broker, a pipeline whose worker is
// slower than its fetches (Paced to 20,000 records/s) pauses each partition at its queue's bound again
// and again, and still reads the topic once: it takes everything franz-go
// fetched before pausing, so franz-go drops nothing it fetched for a
// paused partition to fetch it again after the resume (polling the queue's
// bound at a time, it decoded about half as many records again).
func TestPauseFetchesOnce(t *testing.T) {
	t.Parallel()
	const partitions, perPartition = 4, 10_000
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	rdb := integration.NewRedisClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, partitions)
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	value := make([]byte, 200)
	var recs []*kgo.Record
	for p := range partitions {
		for i := range perPartition {
			recs = append(recs, &kgo.Record{Partition: int32(p), Key: fmt.Appendf(nil, "o-%d-%d", p, i), Value: value})
		}
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ledger, err := sink.NewLedger(rdb, sink.WithPrefix(integration.RedisPrefix(t, rdb)))
	if err != nil {
		t.Fatal(err)
	}
	fetched := &fetchCounter{}
	log := watch.New()
	p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(integration.Group(t)),
		pipeline.Sink(pipeline.Paced(ledger, 20_000)), pipeline.MaxBatch(100), pipeline.QueueRecords(400),
		pipeline.KafkaOptions(kgo.WithHooks(fetched)), pipeline.Observe(log.Observer("p")))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		_ = p.Close(ctx)
		<-done
	}()
	if err := log.Wait(ctx, "every partition committed to its end", func(evs []watch.Tagged) bool {
		c := watch.Committed(evs, "p")
		for i := range partitions {
			if c[checkpoint.Partition{Topic: topic, Partition: int32(i)}] != perPartition {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	const total = partitions * perPartition
	// A fetch already on its way when a partition pauses can still be
	// dropped; that is rare, and far below a refetch per pause.
	if n := fetched.n.Load(); n > total*102/100 {
		t.Fatalf("decoded %d records for the %d of the topic (%.0f%% more): fetched again after pauses", n, total, float64(n-total)*100/total)
	} else {
		t.Logf("decoded %d records for %d", n, total)
	}
}
