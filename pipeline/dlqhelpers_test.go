package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// offsetCounter counts how often each offset was handed to the sink.
type offsetCounter struct {
	pipeline.Applier
	mu sync.Mutex
	n  map[int64]int
}

func (c *offsetCounter) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	c.mu.Lock()
	if c.n == nil {
		c.n = make(map[int64]int)
	}
	for _, r := range b {
		c.n[r.Offset]++
	}
	c.mu.Unlock()
	return c.Applier.Apply(ctx, b)
}

func (c *offsetCounter) count(off int64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[off]
}

// readAll returns every record of topic's partition 0 up to its end.
func readAll(t *testing.T, brokers []string, topic string) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
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

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
