package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/sink"
)

// groupOffsets returns group's committed offsets on topic, by partition.
func groupOffsets(ctx context.Context, t *testing.T, brokers []string, group, topic string) map[int32]int64 {
	t.Helper()
	offs, err := integration.NewAdmin(t, brokers).FetchOffsets(ctx, group)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		t.Fatalf("offsets of group %s: %v", group, err)
	}
	got := map[int32]int64{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			got[o.Partition] = o.At
		}
	})
	return got
}

// claimsPastCommit counts the ledger entries under prefix claimed before
// at for records at or past committed's offset of their partition: what a
// process killed at at applied and never committed past, which its
// successor reads again.
func claimsPastCommit(ctx context.Context, t *testing.T, rdb redis.UniversalClient, prefix string, committed map[int32]int64, at time.Time) int64 {
	t.Helper()
	var n int64
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		v, err := rdb.Get(ctx, iter.Val()).Result()
		if err != nil {
			t.Fatalf("ledger entry %s: %v", iter.Val(), err)
		}
		c, err := sink.DecodeClaim(v)
		if err != nil {
			t.Fatalf("ledger entry %s: %v", iter.Val(), err)
		}
		if c.At.Before(at) && c.Offset >= committed[c.Partition] {
			n++
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
