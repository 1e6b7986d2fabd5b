package integration_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// keyedCalls is an external effect (2ms a call) that counts the calls per
// business key and checks that the calls of one record key (a customer)
// never overlap and come in offset order per partition; it notes the most
// calls running at once, and cancels stop after stopAt calls.
type keyedCalls struct {
	mu       sync.Mutex
	calls    map[string]int   // business key -> calls
	busy     map[string]bool  // partition/record key -> a call runs
	last     map[string]int64 // partition/record key -> last offset called
	problems []string
	running  int
	peak     int
	n        int
	stopAt   int
	stop     context.CancelFunc
	failOnce string // its first call fails
	failed   bool
}

func (k *keyedCalls) effect(ctx context.Context, key string, r *sink.Record) error {
	line := fmt.Sprintf("%d/%s", r.Partition, r.Key)
	k.mu.Lock()
	if k.busy[line] {
		k.problems = append(k.problems, fmt.Sprintf("%s: offset %d called while an earlier call of its key ran", line, r.Offset))
	}
	if last, ok := k.last[line]; ok && r.Offset <= last {
		k.problems = append(k.problems, fmt.Sprintf("%s: offset %d called after %d", line, r.Offset, last))
	}
	if key == k.failOnce && !k.failed {
		k.failed = true
		k.mu.Unlock()
		return errors.New("unavailable")
	}
	k.busy[line], k.last[line] = true, r.Offset
	k.running++
	k.peak = max(k.peak, k.running)
	k.mu.Unlock()
	select {
	case <-time.After(2 * time.Millisecond):
	case <-ctx.Done():
		k.mu.Lock()
		k.busy[line] = false
		k.running--
		k.mu.Unlock()
		return ctx.Err()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.busy[line] = false
	k.running--
	k.calls[key]++
	k.n++
	if k.n == k.stopAt && k.stop != nil {
		k.stop()
	}
	return nil
}

// TestReplayInFlight replays, on the real servers, a 3-partition topic of
// 600 orders (record key the customer, business key the order ID, every
// fifth order sent twice) in guard mode with MaxInFlight 16; the first
// call of order-0590, near the end, fails and is retried as a group run
// retries it (a replay whose range was read to its end keeps retrying). The first run
// of the replay id is stopped (its context cancelled) after 150 effects;
// the rerun of the same id continues from its checkpoints to the end.
// Every order's effect ran exactly once over both runs (re-sends and
// records landed past a checkpoint suppressed by the guard's ledger; an
// effect that ran as the first run stopped is marked done, not run again),
// the two runs applied every order between them, a
// customer's calls never overlapped and came in offset order, calls did
// run at once, and each partition's progress is done at its end. A second
// replay id over the same range calls nothing.
func TestReplayInFlight(t *testing.T) {
	t.Parallel()
	const orders, customers = 600, 9
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := itest.NewReplayEnv(t, "", 3)
	cl := integration.NewKafkaClient(t, e.Brokers, kgo.DefaultProduceTopic(e.Topic))
	var recs []*kgo.Record
	for i := range orders {
		rec := &kgo.Record{Key: fmt.Appendf(nil, "customer-%d", i%customers), Value: fmt.Appendf(nil, `{"order_id":"order-%04d"}`, i)}
		recs = append(recs, rec)
		if i%5 == 0 {
			recs = append(recs, &kgo.Record{Key: rec.Key, Value: rec.Value})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	_, ranges := e.WholeTopic(ctx)
	src, err := sink.ParseKeySource("json:order_id")
	if err != nil {
		t.Fatal(err)
	}
	g, err := sink.NewGuard(e.Rdb, sink.WithPrefix(e.Ledger()), sink.WithKeySource(src))
	if err != nil {
		t.Fatal(err)
	}
	k := &keyedCalls{calls: map[string]int{}, busy: map[string]bool{}, last: map[string]int64{}, failOnce: "order-0590"}
	replay := func(ctx context.Context, id string) (*pipeline.Replay, error) {
		r, err := pipeline.NewReplay(id, e.Topic, ranges, e.Rdb, pipeline.Brokers(e.Brokers...),
			pipeline.Sink(pipeline.Guarded(g, k.effect)), pipeline.MaxInFlight(16),
			pipeline.CommitInterval(50*time.Millisecond), pipeline.CheckpointPrefix(e.Prefix+"replay:"))
		if err != nil {
			t.Fatal(err)
		}
		return r, r.Run(ctx)
	}

	stopped, stop := context.WithCancel(ctx)
	k.mu.Lock()
	k.stopAt, k.stop = orders/4, stop
	k.mu.Unlock()
	r0, err := replay(stopped, "first")
	if err == nil {
		t.Fatal("the stopped run returned nil, want its context's error")
	}
	var applied0 int64
	for _, p := range r0.Progress() {
		applied0 += p.Applied
	}
	k.mu.Lock()
	k.last = map[string]int64{} // the rerun starts again at the checkpoint
	half, peak := k.n, k.peak
	k.mu.Unlock()
	if half >= orders {
		t.Fatalf("the first run made %d calls before it stopped: nothing left for the rerun", half)
	}
	r, err := replay(ctx, "first")
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	var applied, suppressed int64
	resumed := 0
	for _, p := range r.Progress() {
		applied, suppressed = applied+p.Applied, suppressed+p.Suppressed
		if p.Begin > p.From {
			resumed++
		}
		if !p.Done || p.Landed != p.To {
			t.Errorf("rerun: partition %d progress %+v, want done at its end", p.Partition, p)
		}
	}
	if resumed == 0 {
		t.Errorf("rerun: no partition began past its start: the stopped run committed no checkpoint")
	}
	k.mu.Lock()
	for _, p := range k.problems {
		t.Error(p)
	}
	if !k.failed {
		t.Errorf("%s never called", k.failOnce)
	}
	if len(k.calls) != orders {
		t.Errorf("%d orders called, want %d", len(k.calls), orders)
	}
	for key, n := range k.calls {
		if n != 1 {
			t.Errorf("%s: %d calls, want exactly one", key, n)
		}
	}
	t.Logf("stopped run: %d calls, %d applied, at most %d at once; rerun: %d applied, %d suppressed, at most %d at once",
		half, applied0, peak, applied, suppressed, k.peak)
	if k.peak < 2 {
		t.Errorf("at most %d calls at once, want several (MaxInFlight 16)", k.peak)
	}
	if applied0+applied != orders {
		t.Errorf("the stopped run applied %d and the rerun %d, want %d in all", applied0, applied, orders)
	}
	before := k.n
	k.mu.Unlock()

	if _, err := replay(ctx, "second"); err != nil {
		t.Fatalf("second replay: %v", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n != before {
		t.Errorf("a second replay id made %d calls over a range all done, want none", k.n-before)
	}
}
