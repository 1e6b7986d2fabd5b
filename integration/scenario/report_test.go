package scenario_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/scenario"
)

// TestReportEndIsLastStable: the end a Report compares committed offsets
// with is what a read_committed consumer can reach, the last stable offset:
// on a partition with a transaction still open it stops at the open
// transaction's first record, below the high watermark. Compared with the
// high watermark, "committed equals log end" could never hold there.
func TestReportEndIsLastStable(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	topic := integration.CreateTopic(t, brokers, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic), kgo.TransactionalID(topic+"-txn"))
	txn := func(n int, end bool) int64 {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		first := int64(-1)
		for i := range n {
			r, err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).First()
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = r.Offset
			}
		}
		if end {
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
		}
		return first
	}
	txn(5, true)
	open := txn(3, false) // left open until the test ends
	p := checkpoint.Partition{Topic: topic}
	for {
		_, ends, err := scenario.Offsets(ctx, integration.NewAdmin(t, brokers), integration.Group(t), topic)
		if err != nil {
			t.Fatal(err)
		}
		if ends[p] == open { // the first transaction's marker is written
			return
		}
		if ends[p] > open {
			t.Fatalf("the report's end of %s is %d, past the open transaction at %d: not the last stable offset", p, ends[p], open)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the report's end of %s stays %d, want the open transaction's first offset %d", p, ends[p], open)
		case <-time.After(20 * time.Millisecond): // poll interval: the marker is written asynchronously
		}
	}
}
