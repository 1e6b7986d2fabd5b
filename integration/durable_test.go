package integration_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestCommitWaitsForLocalFsync: a pipeline whose commits wait for the local
// AOF fsync (sink.Durable, WAITAOF 1 0, pipeline.BeforeCommit) on a Valkey
// that does not fsync (appendfsync no: Valkey never fsyncs by itself, so
// WAITAOF never confirms) lands every effect and commits nothing: each
// commit is refused with sink.ErrNotDurable. Once the server fsyncs
// (CONFIG SET appendfsync everysec) the held commit goes through, to the end.
func TestCommitWaitsForLocalFsync(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	vk := itest.StartServer(t, itest.ValkeyBin(t), "--appendfsync", "no")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 1)
	ends := itest.ProduceKeys(ctx, t, brokers, topic, 30)
	part := checkpoint.Partition{Topic: topic}

	ledger, err := sink.NewLedger(vk.C)
	if err != nil {
		t.Fatal(err)
	}
	d, err := sink.NewDurable(vk.C, "shardpipe:fence", sink.WithLocalFsync(), sink.WithWaitTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	log := watch.New()
	group := integration.Group(t)
	p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(group),
		pipeline.Sink(ledger), pipeline.CommitEvery(10), pipeline.CommitInterval(50*time.Millisecond),
		pipeline.BeforeCommit(d), pipeline.Observe(log.Observer("p")))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		_ = p.Close(ctx)
		<-done
	}()

	// Every record landed, and the commit of the end was refused as not durable.
	if err := log.Wait(ctx, "the commit of the end refused as not durable", func(evs []watch.Tagged) bool {
		for _, e := range evs {
			if e.Kind == pipeline.CommitRefused && e.Partition == part && e.Offset == ends[0] && errors.Is(e.Err, sink.ErrNotDurable) {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := vk.C.Exists(ctx, "shardpipe:ledger:k0", "shardpipe:ledger:k29").Result(); err != nil || n != 2 {
		t.Fatalf("ledger keys k0 and k29: %d exist (%v), want both: the effects land while the commit waits", n, err)
	}
	if c := watch.Committed(log.Events(), "p"); len(c) > 0 {
		t.Fatalf("committed %v while the server never fsynced; want nothing", c)
	}
	if got := itest.GroupCommitted(ctx, t, brokers, group, topic); len(got) > 0 {
		t.Fatalf("the broker holds committed offsets %v; want none", got)
	}

	vk.Config(ctx, "appendfsync", "everysec")
	if err := log.Wait(ctx, "the end committed once the server fsyncs", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "p")[part] == ends[0]
	}); err != nil {
		t.Fatal(err)
	}
}
