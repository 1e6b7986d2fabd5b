package itest

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
)

// ReadDLQ reads every record of partition 0 of topic up to its end offset.
func ReadDLQ(ctx context.Context, t *testing.T, brokers []string, topic string) []*kgo.Record {
	t.Helper()
	ends, err := integration.NewAdmin(t, brokers).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	cl := integration.NewKafkaClient(t, brokers,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	var out []*kgo.Record
	for int64(len(out)) < end.Offset {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}
