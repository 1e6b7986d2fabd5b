package pipeline_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestDefaultCommitEvery: with the default commit policy a partition with a
// backlog commits every 500 landed records (batches of 500, one Redis round
// trip and one commit each), and the final commit of Close covers the rest.
// The time trigger is pushed out of the way so only the count commits.
func TestDefaultCommitEvery(t *testing.T) {
	env := newFake(t, "orders", 1)
	var rs []*kgo.Record
	for i := range 1250 {
		rs = append(rs, &kgo.Record{Topic: "orders", Key: fmt.Appendf(nil, "order-%d", i), Value: []byte("{}")})
	}
	produce(t, env.brokers, rs...)
	ledger, err := sink.NewLedger(env.rc)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, env.brokers, ledger, pipeline.CommitInterval(time.Hour))
	part := checkpoint.Partition{Topic: "orders"}
	if err := r.log.Wait(r.ctx, "the count commits", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "")[part] >= 1000
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.p.Close(r.ctx); err != nil {
		t.Fatal(err)
	}
	var commits []int64
	for _, e := range r.log.Events() {
		if e.Kind == pipeline.Committed && e.Partition == part {
			commits = append(commits, e.Offset)
		}
	}
	if want := []int64{500, 1000, 1250}; !slices.Equal(commits, want) {
		t.Errorf("commits at %v, want %v", commits, want)
	}
}
