package integration

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration/harness"
	"github.com/shardpipe/shardpipe/internal/scenario"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestZombie: consumer A stalls while holding a batch on every partition; B
// joins and the partitions that move to B are revoked from A past A's revoke
// deadline, so A is fenced for them. B processes them to the end. A then wakes:
// its late effects are suppressed by the ledger, its commits are refused
// locally with ErrStaleEpoch and counted, and the broker refuses the same
// commit sent with A's old epoch. B's committed offsets never move back.
func TestZombie(t *testing.T) {
	eachProtocol(t, 3*time.Minute, testZombie)
}

func testZombie(t *testing.T, ctx context.Context, env scenario.Env) {
	proto := env.Protocol
	const parts, perPart, every = 4, 100, 10
	if err := scenario.CreateTopic(ctx, env.Brokers, env.Topic, parts); err != nil {
		t.Fatal(err)
	}
	if err := scenario.ProduceOrders(ctx, env.Brokers, env.Topic, parts, perPart); err != nil {
		t.Fatal(err)
	}
	log := watch.New()

	// A's hook stalls the first batch of each partition until release closes.
	release := make(chan struct{})
	var mu sync.Mutex
	stalled := map[checkpoint.Partition]bool{}
	stalledCh := make(chan struct{}, parts)
	hook := func(hctx context.Context, p checkpoint.Partition, _ int64, _ []sink.Record) {
		mu.Lock()
		first := !stalled[p]
		stalled[p] = true
		mu.Unlock()
		if !first {
			return
		}
		stalledCh <- struct{}{}
		select {
		case <-release:
		case <-hctx.Done():
		}
	}
	newConsumer := func(tag string, opts ...pipeline.Option) *pipeline.Pipeline {
		ledger, err := sink.NewLedger(env.Redis, sink.WithPrefix(env.Prefix))
		if err != nil {
			t.Fatal(err)
		}
		p, err := pipeline.New(append([]pipeline.Option{pipeline.Brokers(env.Brokers...), pipeline.Topics(env.Topic),
			pipeline.Group(env.Group), pipeline.Sink(ledger), pipeline.GroupProtocol(proto),
			pipeline.CommitEvery(every), pipeline.CommitInterval(0), pipeline.Observe(log.Observer(tag))}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := newConsumer("A", pipeline.WithHooks(pipeline.Hooks{BeforeApply: hook}), pipeline.RevokeTimeout(2*time.Second))
	doneA := make(chan error, 1)
	go func() { doneA <- a.Run(ctx) }()
	for range parts {
		select {
		case <-stalledCh:
		case <-ctx.Done():
			t.Fatal("A never stalled on all partitions")
		}
	}
	_, epochA := a.Client().GroupMetadata()
	memberA, _ := a.Client().GroupMetadata()

	b := newConsumer("B")
	doneB := make(chan error, 1)
	go func() { doneB <- b.Run(ctx) }()
	var moved []checkpoint.Partition
	err := log.Wait(ctx, "B to own partitions and commit them to the end", func(evs []watch.Tagged) bool {
		moved = moved[:0]
		for _, e := range evs {
			if e.Tag == "B" && e.Kind == pipeline.Assigned {
				moved = append(moved, e.Partition)
			}
		}
		c := watch.Committed(evs, "B")
		for _, p := range moved {
			if c[p] != perPart {
				return false
			}
		}
		return len(moved) > 0
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("partitions moved from A to B: %v", moved)

	close(release) // A wakes up
	err = log.Wait(ctx, "A's late commits on the moved partitions to be refused", func(evs []watch.Tagged) bool {
		for _, p := range moved {
			if !watch.Has(evs, "A", pipeline.CommitRefused, p) {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range log.Events() {
		if e.Tag == "A" && e.Kind == pipeline.CommitRefused && !errors.Is(e.Err, checkpoint.ErrStaleEpoch) {
			t.Errorf("A's refused commit on %s: %v, want ErrStaleEpoch", e.Partition, e.Err)
		}
	}
	statsA := map[checkpoint.Partition]pipeline.PartitionStats{}
	for _, s := range a.Stats() {
		statsA[s.Partition] = s
	}
	for _, p := range moved {
		s := statsA[p]
		if s.Fenced < 1 || s.Applied != 0 || s.Suppressed != s.Attempts || s.Attempts == 0 {
			t.Errorf("zombie on %s: attempts=%d applied=%d suppressed=%d fenced=%d; want all late effects suppressed and a fenced commit",
				p, s.Attempts, s.Applied, s.Suppressed, s.Fenced)
		}
	}

	// The broker's own fence: A's old epoch cannot commit either.
	adm := harness.NewAdmin(t, env.Brokers)
	cl := harness.NewKafkaClient(t, env.Brokers)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.MemberID, req.Generation = env.Group, memberA, epochA
	topics, err := adm.ListTopics(ctx, env.Topic)
	if err != nil {
		t.Fatal(err)
	}
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = env.Topic, topics[env.Topic].ID
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = moved[0].Partition, 5
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	brokerErr := kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	t.Logf("broker answer to A's stale commit (member %s epoch %d) on %s: %v", memberA, epochA, moved[0], brokerErr)
	if !errors.Is(brokerErr, kerr.IllegalGeneration) && !errors.Is(brokerErr, kerr.StaleMemberEpoch) &&
		!errors.Is(brokerErr, kerr.UnknownMemberID) && !errors.Is(brokerErr, kerr.FencedMemberEpoch) {
		t.Errorf("broker accepted or answered %v to a stale commit", brokerErr)
	}

	for _, pc := range []struct {
		p    *pipeline.Pipeline
		done chan error
	}{{a, doneA}, {b, doneB}} {
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		if err := pc.p.Close(cctx); err != nil {
			t.Error(err)
		}
		ccancel()
		<-pc.done
	}
	offs, err := adm.FetchOffsets(ctx, env.Group)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range moved {
		if o, _ := offs.Lookup(p.Topic, p.Partition); o.At != perPart {
			t.Errorf("%s committed offset %d after the zombie woke, want %d", p, o.At, perPart)
		}
	}
	applied, suppressed := int64(0), int64(0)
	for _, p := range []*pipeline.Pipeline{a, b} {
		_, ap, s, _, _ := pipeline.Totals(p.Stats())
		applied, suppressed = applied+ap, suppressed+s
	}
	t.Logf("zombie (%s): applied=%d suppressed=%d moved=%d", proto, applied, suppressed, len(moved))
	if applied != parts*perPart {
		t.Errorf("applied %d effects, want exactly %d", applied, parts*perPart)
	}
}
