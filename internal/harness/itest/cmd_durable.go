package itest

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
)

// ProduceKeys writes n records keyed k0..k(n-1) with the value {} and
// returns each partition's end offset.
func ProduceKeys(ctx context.Context, t *testing.T, brokers []string, topic string, n int) map[int32]int64 {
	t.Helper()
	prod := integration.NewKafkaClient(t, brokers)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("{}")}
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	ends, err := integration.NewAdmin(t, brokers).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets: %v", err)
	}
	out := make(map[int32]int64)
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// GroupCommitted returns the group's committed offset per partition of topic.
func GroupCommitted(ctx context.Context, t *testing.T, brokers []string, group, topic string) map[int32]int64 {
	t.Helper()
	offs, err := integration.NewAdmin(t, brokers).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	out := make(map[int32]int64)
	for p, o := range offs[topic] {
		if o.Err == nil && o.At >= 0 {
			out[p] = o.At
		}
	}
	return out
}
