package integration_test

import (
	"context"
	"encoding/binary"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// joinGate holds a client's JoinGroup requests while closed: a member
// frozen between the heartbeat that told it of a rebalance and its join.
type joinGate struct {
	armed atomic.Bool
	open  chan struct{}
	held  atomic.Int32 // JoinGroups held so far
}

func newJoinGate() *joinGate { return &joinGate{open: make(chan struct{})} }

func (g *joinGate) dial(ctx context.Context, network, host string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	return gatedConn{Conn: c, g: g}, nil
}

type gatedConn struct {
	net.Conn
	g *joinGate
}

// Write holds a whole JoinGroup request (franz-go writes each request in
// one call: size, then the header's API key) while the gate is armed.
func (c gatedConn) Write(b []byte) (int, error) {
	if c.g.armed.Load() && len(b) >= 6 && int16(binary.BigEndian.Uint16(b[4:6])) == kmsg.JoinGroup.Int16() {
		c.g.held.Add(1)
		<-c.g.open
	}
	return c.Conn.Write(b)
}

// landAll lands every record (no Redis: the test is about offsets); with a
// gate, not while the gate is armed (the member is frozen).
type landAll struct {
	n    *atomic.Int64
	gate *joinGate
}

func (a landAll) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	if a.gate != nil && a.gate.armed.Load() {
		select {
		case <-a.gate.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	a.n.Add(int64(len(b)))
	res := make([]sink.Result, len(b))
	for i := range res {
		res[i].Outcome = sink.Applied
	}
	return res, nil
}

// TestRejoinAsNewMemberOnRealBroker: on a real broker, a classic member
// that learns of a rebalance from its heartbeat and is frozen before its
// JoinGroup reaches the broker (a stop, a long pause: its joins and its
// effects are held) is dropped from the
// group when the join phase ends without it; the other member gets its
// partition and commits past what it had landed. Woken, its JoinGroup is
// answered UNKNOWN_MEMBER_ID, franz-go rejoins it as a new member with no
// OnPartitionsLost, and the partition, kept by the other member, is revoked
// from it. Its old term must not commit then: the broker would accept the
// commit under the new member's ID and generation, and the group's commit
// log would go back (what chaos seed 649191506 saw: 117 after 118).
func TestRejoinAsNewMemberOnRealBroker(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	topic, group := integration.Topic(t), integration.Group(t)
	integration.CreateNamedTopic(t, brokers, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := scenario.ProduceOrders(ctx, brokers, topic, 1, 100); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var aEvents []pipeline.Event
	gate := newJoinGate()
	var aLanded, bLanded atomic.Int64
	newPipe := func(app pipeline.Applier, obs func(pipeline.Event), extra ...kgo.Opt) *pipeline.Pipeline {
		kopts := append([]kgo.Opt{kgo.RebalanceTimeout(3 * time.Second), kgo.HeartbeatInterval(300 * time.Millisecond)}, extra...)
		p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(group),
			pipeline.Sink(app), pipeline.CommitEvery(1000), pipeline.CommitInterval(time.Hour),
			pipeline.SessionTimeout(6*time.Second), pipeline.KafkaOptions(kopts...),
			pipeline.Logger(slog.New(slog.DiscardHandler)), pipeline.Observe(obs))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := newPipe(landAll{&aLanded, gate}, func(e pipeline.Event) { mu.Lock(); aEvents = append(aEvents, e); mu.Unlock() },
		kgo.Dialer(gate.dial))
	go func() { _ = a.Run(ctx) }()
	defer a.Abort()
	await := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	await("A to land the first 100 records", func() bool { return aLanded.Load() >= 100 })
	m1, gen1 := a.Client().GroupMetadata()

	// A now holds 100 landed records, uncommitted. B joins: A's next
	// heartbeat meets the rebalance, and its JoinGroup is held.
	gate.armed.Store(true)
	b := newPipe(landAll{n: &bLanded}, func(pipeline.Event) {}, kgo.HeartbeatInterval(300*time.Millisecond))
	bDone := make(chan struct{})
	go func() { defer close(bDone); _ = b.Run(ctx) }()
	await("A's JoinGroup to be held", func() bool { return gate.held.Load() > 0 })
	adm := kadm.NewClient(b.Client())
	committed := func() int64 {
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return -1
		}
		o, _ := offs.Lookup(topic, 0)
		return o.At
	}
	// B, alone once the join phase ends without A, reads the partition
	// from the start; 50 more records, and B's final commit (at its
	// revoke) will be past A's landed 100.
	if _, err := scenario.ProduceOrders(ctx, brokers, topic, 1, 50); err != nil {
		t.Fatal(err)
	}
	await("B to land all 150 records", func() bool { return bLanded.Load() >= 150 })
	gate.armed.Store(false)
	close(gate.open) // A wakes: its join finds its member gone
	await("A to rejoin as a new member", func() bool {
		m, g := a.Client().GroupMetadata()
		return m != "" && m != m1 && g > gen1
	})
	// B's commits happen at its revoke or stop; stop it to have them, then
	// A (which then gets the partition and commits from B's offset).
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	if err := b.Close(cctx); err != nil {
		t.Fatal(err)
	}
	<-bDone
	if err := a.Close(cctx); err != nil {
		t.Fatal(err)
	}
	log, err := chaoscheck.CommitLog(ctx, brokers, group, topic)
	if err != nil {
		t.Fatal(err)
	}
	hi := chaoscheck.Commit{Offset: -1}
	for _, c := range log[0] {
		if c.Offset < hi.Offset {
			t.Errorf("the group's commit log went back: %s, then %s (A was %s, generation %d)", hi, c, m1, gen1)
		}
		if c.Offset >= hi.Offset {
			hi = c
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, e := range aEvents {
		if e.Epoch == int64(gen1) && e.Kind == pipeline.Committed {
			t.Errorf("A's term of generation %d committed %d after A rejoined as a new member", gen1, e.Offset)
		}
	}
	t.Logf("commit log of partition 0: %v; committed at the end %d", log[0], committed())
}
