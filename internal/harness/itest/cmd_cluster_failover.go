package itest

import (
	"context"
	"testing"

	"github.com/shardpipe/shardpipe/integration"
)

// EndOffsets returns each partition's end offset.
func EndOffsets(ctx context.Context, t *testing.T, brokers []string, topic string) map[int32]int64 {
	t.Helper()
	ends, err := integration.NewAdmin(t, brokers).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets: %v", err)
	}
	out := map[int32]int64{}
	for _, ps := range ends {
		for p, o := range ps {
			out[p] = o.Offset
		}
	}
	return out
}
