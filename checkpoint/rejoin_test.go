package checkpoint_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// TestKafkaCommitAfterRejoinAsNewMember: a classic member told by its
// JoinGroup that its member is unknown (its session expired) is rejoined by
// franz-go as a new member without OnPartitionsLost. A commit of a term
// assigned to the old member, made after that, goes out under the new
// member's ID and generation, which the broker accepts; the store refuses
// it instead (ErrStaleEpoch, ErrMemberChanged), sends nothing for it, and
// closes the term.
func TestKafkaCommitAfterRejoinAsNewMember(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"),
		kfake.BrokerConfigs(map[string]string{"group.min.session.timeout.ms": "100"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	part := checkpoint.Partition{Topic: "orders"}
	var (
		store    *checkpoint.Kafka
		ready    = make(chan struct{}) // closed once store is set
		assigned = make(chan int32, 4)
	)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("orders"),
		kgo.DisableAutoCommit(), kgo.SessionTimeout(time.Second), kgo.HeartbeatInterval(100*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, a map[string][]int32) {
			<-ready
			if len(a["orders"]) > 0 {
				_, gen := cl.GroupMetadata()
				store.Assign(part, int64(gen))
				assigned <- gen
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	store = checkpoint.NewKafka(cl)
	close(ready)
	go func() {
		for ctx.Err() == nil && !cl.PollFetches(ctx).IsClientClosed() {
		}
	}()
	var gen1 int32
	select {
	case gen1 = <-assigned:
	case <-ctx.Done():
		t.Fatal("never assigned")
	}
	m1, _ := cl.GroupMetadata()
	if err := store.Commit(ctx, part, int64(gen1), 3); err != nil {
		t.Fatalf("commit of the term while its member is in the group: %v", err)
	}

	var (
		mu   sync.Mutex
		sent []string // member IDs of the OffsetCommits carrying the partition
	)
	var hb, join bool
	c.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.OffsetCommitRequest)
		mu.Lock()
		for _, t := range r.Topics {
			if len(t.Partitions) > 0 {
				sent = append(sent, r.MemberID)
			}
		}
		mu.Unlock()
		return nil, nil, false
	})
	c.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.HeartbeatRequest)
		if r.MemberID != m1 || hb {
			return nil, nil, false
		}
		hb = true
		resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.RebalanceInProgress.Code
		return resp, nil, true
	})
	c.ControlKey(int16(kmsg.JoinGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.JoinGroupRequest)
		if r.MemberID != m1 || join {
			return nil, nil, false
		}
		join = true
		resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp, nil, true
	})
	for {
		if m, g := cl.GroupMetadata(); m != m1 && m != "" && g > gen1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the client did not rejoin as a new member")
		case <-time.After(10 * time.Millisecond):
		}
	}
	m2, gen2 := cl.GroupMetadata()

	err = store.Commit(ctx, part, int64(gen1), 5)
	if !errors.Is(err, checkpoint.ErrStaleEpoch) || !errors.Is(err, checkpoint.ErrMemberChanged) {
		t.Errorf("commit of member %s's term (generation %d) after the client rejoined as %s (generation %d): %v; want ErrStaleEpoch and ErrMemberChanged",
			m1, gen1, m2, gen2, err)
	}
	mu.Lock()
	if len(sent) > 0 {
		t.Errorf("OffsetCommits of the old term sent under members %v", sent)
	}
	mu.Unlock()
	if _, ok := store.Held(part); ok {
		t.Error("the old member's term is still held")
	}
}
