package pipeline_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/shardpipe/shardpipe/pipeline"
)

// TestRejoinAsNewMemberEndsTerms: a classic member whose session expired
// while it was frozen (a zombie) can learn of it from its JoinGroup rather
// than from a heartbeat: its heartbeat says a rebalance is under way, its
// join then comes back UNKNOWN_MEMBER_ID, and franz-go rejoins at once
// without a member ID, as a new member, calling no OnPartitionsLost. The
// old member's terms ended with its membership (the group may have given
// its partitions to another member, which committed past them), so none of
// their commits may land: not under the new member's ID and generation,
// which the broker would accept. The partitions the new member holds get
// new terms, from the committed offset.
//
// This is how the chaos run with seed 649191506 committed offsets 117
// after 118 and 154 after 155: the classic zombie rejoined as a new member,
// and its old terms' commits went out under the new membership.
func TestRejoinAsNewMemberEndsTerms(t *testing.T) {
	const records = 20
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"),
		kfake.BrokerConfigs(map[string]string{"group.min.session.timeout.ms": "100"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range records {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()

	var (
		mu      sync.Mutex
		events  []pipeline.Event
		mark    = -1 // events before this index came before the join was refused
		changed = make(chan struct{}, 16)
	)
	var landed atomic.Int64
	p, err := pipeline.New(pipeline.Brokers(c.ListenAddrs()...), pipeline.Topics("orders"), pipeline.Group("g"),
		pipeline.Sink(countApplier{&landed}), pipeline.CommitEvery(1000), pipeline.CommitInterval(time.Hour),
		pipeline.SessionTimeout(time.Second), pipeline.KafkaOptions(kgo.HeartbeatInterval(100*time.Millisecond)),
		pipeline.Logger(slog.New(slog.DiscardHandler)),
		pipeline.Observe(func(e pipeline.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
			select {
			case changed <- struct{}{}:
			default:
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	for landed.Load() < records { // every record landed; none committed (CommitEvery, CommitInterval)
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d records landed", landed.Load(), records)
		case <-time.After(10 * time.Millisecond):
		}
	}
	m1, gen1 := p.Client().GroupMetadata()

	// The zombie wakes: its heartbeat meets a rebalance, its join finds
	// its member gone.
	var hb, join atomic.Bool
	c.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.HeartbeatRequest)
		if r.MemberID != m1 || hb.Swap(true) {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.RebalanceInProgress.Code
		return resp, nil, true
	})
	c.ControlKey(int16(kmsg.JoinGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.JoinGroupRequest)
		if r.MemberID != m1 || join.Swap(true) {
			return nil, nil, false
		}
		mu.Lock()
		mark = len(events)
		mu.Unlock()
		resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp, nil, true
	})
	// Until the client is a member again, under a new ID.
	for {
		if m, g := p.Client().GroupMetadata(); m != m1 && m != "" && g > gen1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no rejoin as a new member (heartbeat refused %t, join refused %t)", hb.Load(), join.Load())
		case <-changed:
		case <-time.After(10 * time.Millisecond):
		}
	}
	m2, gen2 := p.Client().GroupMetadata()
	// A new term reads the partition again from its committed offset (none:
	// the start); the old term would have gone on at the end.
	reread := time.After(10 * time.Second)
	for landed.Load() < 2*records {
		select {
		case <-ctx.Done():
		case <-reread:
		case <-time.After(10 * time.Millisecond):
			continue
		}
		break
	}
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	if err := p.Close(cctx); err != nil { // drain: the final commits
		t.Fatal(err)
	}
	<-done

	mu.Lock()
	defer mu.Unlock()
	var lost, newTerm bool
	for i, e := range events {
		if i < mark {
			continue
		}
		switch {
		case e.Epoch == int64(gen1) && e.Kind == pipeline.Committed:
			t.Errorf("offset %d committed by the term of member %s (generation %d) after its join was refused "+
				"UNKNOWN_MEMBER_ID; the client rejoined as %s (generation %d)", e.Offset, m1, gen1, m2, gen2)
		case e.Epoch == int64(gen1) && e.Kind == pipeline.Lost:
			lost = true
		case e.Epoch > int64(gen1) && e.Kind == pipeline.Committed && e.Offset == records:
			newTerm = true
		}
	}
	if !lost {
		t.Errorf("the term of member %s (generation %d) did not end as lost after its join was refused; events after: %v",
			m1, gen1, events[mark:])
	}
	if !newTerm {
		t.Errorf("no new term committed the partition to its end (%d); events after the refused join: %v", records, events[mark:])
	}
}
