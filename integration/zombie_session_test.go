package integration_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// childLine is what the zombie child process reports on stdout, one JSON
// object a line.
type childLine struct {
	Kind      string `json:"kind"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Last      int64  `json:"last,omitempty"` // stalled: the batch's last offset
	Stale     bool   `json:"stale,omitempty"`
	Code      string `json:"code,omitempty"` // refused: the broker's error, when it answered
	Err       string `json:"err,omitempty"`
	Attempts  int64  `json:"attempts,omitempty"`
	Applied   int64  `json:"applied,omitempty"`
	Supp      int64  `json:"suppressed,omitempty"`
	Fenced    int64  `json:"fenced,omitempty"`
}

const zombieChildEnv = "SHARDPIPE_ZOMBIE_CHILD"

// TestZombieSessionTimeout: a consumer process is frozen (SIGSTOP) while it
// holds a batch on every partition, so it stops heartbeating and the group
// evicts it when its session times out. A second consumer takes the
// partitions and finishes them. The frozen process is then woken (SIGCONT)
// and let go on with its batch. Per partition, the zombie either learns of the
// loss before its batch reaches Redis, and drops the batch (nothing attempted,
// nothing refused), or applies it first: then every record of it, and of
// whatever it read after it, is suppressed, and its commit is refused as stale
// (by the broker with UNKNOWN_MEMBER_ID, the code for a member whose session
// expired, or by its local fence once the loss is known) and counted, unless
// the loss came before it could commit. Either way it commits nothing: each
// key of its batch was claimed by the new owner, and the new owner's offsets
// stay at the end.
func TestZombieSessionTimeout(t *testing.T) {
	eachProtocol(t, 3*time.Minute, testZombieSession)
}

func testZombieSession(t *testing.T, ctx context.Context, env liveEnv) {
	proto := env.Protocol
	const parts, perPart = 4, 100
	integration.CreateNamedTopic(t, env.Brokers, env.Topic, parts)
	if _, err := scenario.ProduceOrders(ctx, env.Brokers, env.Topic, parts, perPart); err != nil {
		t.Fatal(err)
	}

	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestZombieChild$", "-test.count=1")
	child.Env = append(os.Environ(), zombieChildEnv+"=1", "ZC_BROKERS="+env.Brokers[0], "ZC_TOPIC="+env.Topic,
		"ZC_GROUP="+env.Group, "ZC_PREFIX="+env.Prefix, "ZC_REDIS="+integration.Redis(t), "ZC_PROTO="+proto.String())
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan childLine, 1024)
	go readChild(stdout, lines)
	var seen []childLine
	next := func(what string, done func() bool) {
		t.Helper()
		for !done() {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("child exited while waiting for %s; it said %+v", what, seen)
				}
				seen = append(seen, l)
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v; child said %+v", what, ctx.Err(), seen)
			}
		}
	}
	count := func(kind string) map[int32]bool {
		m := map[int32]bool{}
		for _, l := range seen {
			if l.Kind == kind {
				m[l.Partition] = true
			}
		}
		return m
	}
	next("the child to hold a batch on every partition", func() bool { return len(count("stalled")) == parts })
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Logf("child %d frozen while holding a batch on %d partitions", child.Process.Pid, parts)

	log := watch.New()
	ledger, err := sink.NewLedger(env.Redis, sink.WithPrefix(env.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	b, err := pipeline.New(pipeline.Brokers(env.Brokers...), pipeline.Topics(env.Topic), pipeline.Group(env.Group),
		pipeline.Sink(ledger), pipeline.GroupProtocol(proto), pipeline.CommitEvery(10), pipeline.Observe(log.Observer("B")))
	if err != nil {
		t.Fatal(err)
	}
	doneB := make(chan error, 1)
	go func() { doneB <- b.Run(ctx) }()
	start := time.Now()
	if err := log.Wait(ctx, "B to commit every partition to its end", func(evs []watch.Tagged) bool {
		c := watch.Committed(evs, "B")
		for n := int32(0); n < parts; n++ {
			if c[checkpoint.Partition{Topic: env.Topic, Partition: n}] != perPart {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("B took over after the frozen child's session expired and finished in %v", time.Since(start).Round(time.Millisecond))
	bMember, _ := b.Client().GroupMetadata()

	if err := child.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	next("the woken child to be refused or to lose each partition", func() bool {
		refused, lost := count("refused"), count("lost")
		for n := int32(0); n < parts; n++ {
			if !refused[n] && !lost[n] {
				return false
			}
		}
		return true
	})
	if _, err := io.WriteString(stdin, "stop\n"); err != nil {
		t.Fatal(err)
	}
	next("the child's stats", func() bool { return len(count("stats")) > 0 })
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}

	claims, err := scenario.ReadLedger(ctx, env.Redis, env.Prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := int32(0); n < parts; n++ {
		var stalled, stats childLine
		var refused []childLine
		lost := false
		for _, l := range seen {
			if l.Partition != n {
				continue
			}
			switch l.Kind {
			case "stalled":
				stalled = l
			case "pstats":
				stats = l
			case "refused":
				refused = append(refused, l)
			case "lost":
				lost = true
			case "committed":
				t.Errorf("partition %d: the woken child committed %d", n, l.Offset)
			}
		}
		batch := stalled.Last - stalled.Offset + 1
		outcome := "dropped its batch: the loss came before it reached Redis"
		if stats.Attempts > 0 {
			outcome = "took its batch to Redis"
		}
		t.Logf("partition %d: zombie held %d..%d and %s; attempts=%d applied=%d suppressed=%d fenced=%d refused=%d lost=%t",
			n, stalled.Offset, stalled.Last, outcome, stats.Attempts, stats.Applied, stats.Supp, stats.Fenced, len(refused), lost)
		if stats.Applied != 0 {
			t.Errorf("partition %d: the zombie applied %d effects after the new owner had", n, stats.Applied)
		}
		for _, l := range refused {
			switch {
			case !l.Stale:
				t.Errorf("partition %d: commit refused for a reason other than its stale term: %s", n, l.Err)
			case l.Code != "" && l.Code != kerr.UnknownMemberID.Message:
				t.Errorf("partition %d: the broker refused the zombie's commit with %s, want UNKNOWN_MEMBER_ID (its session expired)", n, l.Code)
			}
		}
		if stats.Fenced != int64(len(refused)) {
			t.Errorf("partition %d: %d refused commits, counted %d fenced", n, len(refused), stats.Fenced)
		}
		if stats.Attempts == 0 {
			// Dropped: the loss came first, nothing landed, nothing to commit.
			if !lost || len(refused) != 0 {
				t.Errorf("partition %d: nothing attempted, yet lost=%t and %d commits refused; want lost and none", n, lost, len(refused))
			}
		} else {
			// Applied: the whole batch (and any record read after it)
			// was a replay of what the new owner applied.
			if stats.Attempts < batch || stats.Supp != stats.Attempts {
				t.Errorf("partition %d: attempted %d (its batch held %d), suppressed %d; want the batch or more, all suppressed",
					n, stats.Attempts, batch, stats.Supp)
			}
			if len(refused) == 0 && !lost {
				t.Errorf("partition %d: the zombie landed its batch and was neither refused nor told of the loss", n)
			}
		}
		for o := stalled.Offset; o <= stalled.Last; o++ {
			key := scenario.OrderKey(n, int(o))
			if c, ok := claims.Claims[key]; !ok || c.Member != bMember || c.Offset != o || c.Partition != n {
				t.Errorf("partition %d: ledger key %s of the zombie's batch holds %+v (found %t), want the new owner %s's claim of %d@%d",
					n, key, c, ok, bMember, n, o)
			}
		}
	}
	cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
	defer ccancel()
	if err := b.Close(cctx); err != nil {
		t.Fatal(err)
	}
	<-doneB
	offs, err := integration.NewAdmin(t, env.Brokers).FetchOffsets(ctx, env.Group)
	if err != nil {
		t.Fatal(err)
	}
	for n := int32(0); n < parts; n++ {
		if o, _ := offs.Lookup(env.Topic, n); o.At != perPart {
			t.Errorf("partition %d committed at %d after the zombie woke, want %d", n, o.At, perPart)
		}
	}
	if keys, err := countLedger(ctx, env); err != nil || keys != parts*perPart {
		t.Errorf("ledger holds %d keys (%v), want %d", keys, err, parts*perPart)
	}
}

func countLedger(ctx context.Context, env liveEnv) (int, error) {
	n := 0
	it := env.Redis.Scan(ctx, 0, env.Prefix+"*", 1000).Iterator()
	for it.Next(ctx) {
		n++
	}
	return n, it.Err()
}

func readChild(r io.Reader, out chan<- childLine) {
	defer close(out)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var l childLine
		if b := sc.Bytes(); len(b) > 0 && b[0] == '{' && json.Unmarshal(b, &l) == nil && l.Kind != "" {
			out <- l
		}
	}
}

// TestZombieChild is the frozen consumer of TestZombieSessionTimeout, run in
// its own process. It does nothing unless that test started it.
func TestZombieChild(t *testing.T) {
	if os.Getenv(zombieChildEnv) != "1" {
		t.Skip("helper process of TestZombieSessionTimeout")
	}
	var mu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	say := func(l childLine) { mu.Lock(); _ = enc.Encode(l); mu.Unlock() }
	commands := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			commands <- sc.Text()
		}
		close(commands)
	}()
	wake := make(chan struct{})
	var stalled sync.Map
	hook := func(_ context.Context, p checkpoint.Partition, _ int64, batch []sink.Record) {
		if _, loaded := stalled.LoadOrStore(p, true); loaded {
			return
		}
		say(childLine{Kind: "stalled", Partition: p.Partition, Offset: batch[0].Offset, Last: batch[len(batch)-1].Offset})
		<-wake // deliberately deaf to its context: a frozen process notices nothing
	}
	proto, err := pipeline.ParseProtocol(os.Getenv("ZC_PROTO"))
	if err != nil {
		t.Fatal(err)
	}
	rdb := integration.NewRedisClient(t, os.Getenv("ZC_REDIS"))
	ledger, err := sink.NewLedger(rdb, sink.WithPrefix(os.Getenv("ZC_PREFIX")))
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Brokers(os.Getenv("ZC_BROKERS")), pipeline.Topics(os.Getenv("ZC_TOPIC")),
		pipeline.Group(os.Getenv("ZC_GROUP")), pipeline.Sink(ledger), pipeline.GroupProtocol(proto),
		pipeline.CommitEvery(10), pipeline.SessionTimeout(2*time.Second),
		pipeline.KafkaOptions(kgo.HeartbeatInterval(400*time.Millisecond)),
		pipeline.Observe(func(e pipeline.Event) {
			l := childLine{Partition: e.Partition.Partition, Offset: e.Offset}
			switch e.Kind {
			case pipeline.Committed:
				l.Kind = "committed"
			case pipeline.CommitRefused:
				l.Kind, l.Err, l.Stale = "refused", fmt.Sprint(e.Err), errors.Is(e.Err, checkpoint.ErrStaleEpoch)
				if ke := (*kerr.Error)(nil); errors.As(e.Err, &ke) {
					l.Code = ke.Message
				}
			case pipeline.Lost:
				l.Kind = "lost"
			default:
				return
			}
			say(l)
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(faults.WithWorker(ctx, faults.Worker{BeforeApply: hook})) }()
	for cmd := range commands {
		switch cmd {
		case "go":
			close(wake)
		case "stop":
			if err := p.Close(ctx); err != nil {
				t.Error(err)
			}
			<-done
			for _, s := range p.Stats() {
				say(childLine{Kind: "pstats", Partition: s.Partition.Partition, Attempts: s.Attempts, Applied: s.Applied,
					Supp: s.Suppressed, Fenced: s.Fenced})
			}
			tot := pipeline.Totals(p.Stats())
			say(childLine{Kind: "stats", Applied: tot.Applied, Supp: tot.Suppressed, Fenced: tot.Fenced})
			return
		}
	}
}
