package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// stalling passes its first failed batch through and then, as a Redis that
// stays down would, fails every retry: each one waits until release closes
// (or its context ends) and fails without reaching the sink. It forwards
// Finish to the Applier it wraps.
type stalling struct {
	Applier
	failedOnce atomic.Bool
	failed     chan struct{} // closed after the first failure
	release    chan struct{}
}

func (s *stalling) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	if s.failedOnce.Load() {
		select {
		case <-s.release:
		case <-ctx.Done():
		}
		return nil, errors.New("test: redis still down")
	}
	res, err := s.Applier.Apply(ctx, b)
	if _, terr := transient(res); (err != nil || terr != nil) && s.failedOnce.CompareAndSwap(false, true) {
		close(s.failed)
	}
	return res, err
}

func (s *stalling) Finish(ctx context.Context, b []sink.Record) (int, int, error) {
	if f, ok := s.Applier.(interface {
		Finish(context.Context, []sink.Record) (int, int, error)
	}); ok {
		return f.Finish(ctx, b)
	}
	return 0, 0, nil
}

// TestTermEndFinishesUnknownBatch: in guard mode an external effect runs,
// then Redis fails its done write past the sink's retries (the batch's
// outcome is unknown) and stays down while the worker's term ends: the
// partition is lost or revoked, or the pipeline closes (Close, or Run's
// context ending as on SIGTERM). No retry of the batch comes in that term.
// When Redis is back within the time the pipeline waits for the worker, the
// worker still marks done the effect that ran, without running anything:
// the key's claim ends done, and the next owner, meeting the batch again
// after the pending claim's lease would have lapsed, redelivers those
// records without running their effects. Each effect runs exactly once.
// Redis may come back after the revoke stopped waiting for the worker, as
// for a consumer frozen past its revoke timeout: while pay-1's pending claim
// holds its lease the worker still marks it done. Abort, which stands for a
// crash, finishes nothing: the next owner runs pay-1 again, the window the
// idempotency key closes.
//
// The same holds with MaxInFlight, the three keys' effects running at once
// and the outage starting once all three ran: every effect whose done write
// failed is finished at the term's end, and each runs once (after a crash,
// pay-1 twice and the others at most twice: the window).
func TestTermEndFinishesUnknownBatch(t *testing.T) {
	for _, inFlight := range []bool{false, true} {
		t.Run(fmt.Sprintf("in flight %v", inFlight), func(t *testing.T) { termEndFinishes(t, inFlight) })
	}
}

func termEndFinishes(t *testing.T, inFlight bool) {
	part := checkpoint.Partition{Topic: "orders"}
	revoke := map[string][]int32{"orders": {0}}
	for _, tc := range []struct {
		name string
		end  func(ctx context.Context, p *Pipeline, cancelRun context.CancelFunc, runDone <-chan error) error
		// crash: the term ends as a process death would (Abort): nothing
		// is finished, and the next owner runs pay-1 again once its lease
		// lapsed, the window the idempotency key closes.
		crash bool
		// waitRunsOut: Redis comes back only after the revoke stopped
		// waiting for the worker (as for a consumer frozen past its revoke
		// timeout), while pay-1's pending claim still holds its lease.
		waitRunsOut bool
	}{
		{"lost", func(ctx context.Context, p *Pipeline, _ context.CancelFunc, _ <-chan error) error {
			p.onLost(ctx, p.cl, revoke)
			return nil
		}, false, false},
		{"revoked", func(ctx context.Context, p *Pipeline, _ context.CancelFunc, _ <-chan error) error {
			p.onRevoked(ctx, p.cl, revoke)
			return nil
		}, false, false},
		{"closed", func(ctx context.Context, p *Pipeline, _ context.CancelFunc, _ <-chan error) error {
			return p.Close(ctx)
		}, false, false},
		{"run context ended", func(_ context.Context, _ *Pipeline, cancelRun context.CancelFunc, runDone <-chan error) error {
			cancelRun()
			return <-runDone
		}, false, false},
		{"aborted", func(_ context.Context, p *Pipeline, _ context.CancelFunc, _ <-chan error) error {
			p.Abort()
			return nil
		}, true, false},
		{"revoke wait ran out, lease live", func(ctx context.Context, p *Pipeline, _ context.CancelFunc, _ <-chan error) error {
			p.onRevoked(ctx, p.cl, revoke)
			return nil
		}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := payments(ctx, t, 3)
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
			defer rdb.Close()
			const lease = 30 * time.Second
			newGuard := func() *sink.Guard { return fastGuard(t, rdb, lease) }
			var mu sync.Mutex
			runs := map[string]int{}
			othersRan := make(chan struct{}, 2)
			effect := func(_ context.Context, key string, _ *sink.Record) error {
				if inFlight && key == "pay-1" {
					mu.Lock()
					first := runs[key] == 0
					mu.Unlock()
					for i := 0; first && i < 2; i++ {
						<-othersRan // all three effects run at once; the outage follows them
					}
				}
				mu.Lock()
				defer mu.Unlock()
				runs[key]++
				if inFlight && key != "pay-1" && runs[key] == 1 {
					othersRan <- struct{}{}
				}
				if key == "pay-1" && runs[key] == 1 {
					mr.SetError("LOADING Redis is loading the dataset in memory") // the outage starts after the call
				}
				return nil
			}
			g := newGuard()
			app := &stalling{Applier: Guarded(g, effect), failed: make(chan struct{}), release: make(chan struct{})}
			revokeTimeout := 20 * time.Second
			if tc.waitRunsOut {
				revokeTimeout = 300 * time.Millisecond
			}
			opts := func(a Applier, commits chan<- int64) []GroupOpt {
				mif, every := 0, 5*time.Second
				if inFlight {
					// The next owner may get fewer than 3 records: commit them soon.
					mif, every = 3, 50*time.Millisecond
				}
				return []GroupOpt{Brokers(c.ListenAddrs()...), Topics("orders"), Group("g"), Sink(a), MaxBatch(3),
					CommitEvery(3), RevokeTimeout(revokeTimeout), ShutdownTimeout(20 * time.Second), MaxInFlight(mif), CommitInterval(every),
					Logger(slog.New(slog.DiscardHandler)), Observe(func(e Event) {
						if e.Kind == Committed {
							commits <- e.Offset
						}
					})}
			}
			p, err := New(opts(app, make(chan int64, 16))...)
			if err != nil {
				t.Fatal(err)
			}
			runCtx, cancelRun := context.WithCancel(ctx)
			defer cancelRun()
			runDone := make(chan error, 1)
			go func() { runDone <- p.Run(runCtx) }()
			select {
			case <-app.failed:
			case <-ctx.Done():
				t.Fatal("the done write never failed")
			}
			p.mu.Lock()
			w := p.workers[part]
			p.mu.Unlock()
			ended := make(chan error, 1)
			go func() { ended <- tc.end(ctx, p, cancelRun, runDone) }()
			select {
			case <-w.wake: // the term is ending: no retry of the batch may come
			case <-ctx.Done():
				t.Fatal("the worker was never asked to stop")
			}
			close(app.release)
			if !tc.waitRunsOut {
				mr.SetError("") // Redis is back, within the revoke and shutdown timeouts
			}
			if err := <-ended; err != nil {
				t.Fatalf("ending the term: %v", err)
			}
			if tc.waitRunsOut {
				mr.SetError("") // the revoke went on without the worker; the lease holds
				<-w.done
			}
			want := sink.ClaimDone
			if tc.crash {
				want = sink.ClaimPending
			}
			cl, ok, err := g.Lookup(ctx, "pay-1")
			// With effects in flight an abort cannot stop a done write
			// already under way (it is attempted whatever the context, the
			// effect having run), as a crash would: if pay-1's was still
			// retrying when another key's failure stalled the term, it may
			// land once Redis is back. Then pay-1 is done and never runs
			// again; otherwise it stays pending and runs once more.
			pay1Done := inFlight && tc.crash && err == nil && ok && cl.State == sink.ClaimDone
			if pay1Done {
				want = sink.ClaimDone
			}
			if err != nil || !ok || cl.State != want || cl.Epoch != w.epoch || cl.Member != w.member {
				t.Errorf("claim of pay-1 once the term ended: %+v, %v, %v; want %s by the ended term", cl, ok, err, want)
			}
			if tc.name != "closed" && tc.name != "run context ended" {
				if err := p.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}

			// The next owner meets the batch after the pending claim's lease
			// would have lapsed.
			mr.FastForward(lease)
			commits := make(chan int64, 16)
			p2 := nextOwner(ctx, t, opts(Guarded(newGuard(), effect), commits), commits, 3)
			mu.Lock()
			defer mu.Unlock()
			reruns := 0
			if tc.crash {
				reruns = 1
			}
			for i := range 3 {
				k := fmt.Sprintf("pay-%d", i)
				if inFlight && tc.crash && k != "pay-1" {
					if runs[k] < 1 || runs[k] > 2 {
						t.Errorf("effect for %s ran %d times, want once, or twice if its done write failed before the crash", k, runs[k])
					}
					continue
				}
				if pay1Done && k == "pay-1" {
					if runs[k] != 1 {
						t.Errorf("effect for pay-1 ran %d times, want once: its done write landed", runs[k])
					}
					continue
				}
				if want := 1 + reruns*btoi(k == "pay-1"); runs[k] != want {
					t.Errorf("effect for %s ran %d times, want %d", k, runs[k], want)
				}
			}
			if inFlight {
				for i := range 3 {
					k := fmt.Sprintf("pay-%d", i)
					if cl, ok, err := g.Lookup(ctx, k); err != nil || !ok || cl.State != sink.ClaimDone {
						t.Errorf("claim of %s at the end: %+v, %v, %v; want done", k, cl, ok, err)
					}
				}
				return // which records the first term committed past depends on the interleaving
			}
			// pay-0 is redelivered too unless the first term committed past it.
			st := p2.Stats()
			if len(st) != 1 || st[0].Claimed != int64(1+reruns) || st[0].Redelivered != 2-st[0].Start-int64(reruns) {
				t.Errorf("next owner's stats %+v, want pay-2 claimed (and pay-1 after a crash), the records before them from its start redelivered", st)
			}
		})
	}
}

// payments starts a kfake cluster whose topic "orders" (one partition)
// holds n records keyed pay-0, pay-1, ...; the test's cleanup closes it.
func payments(ctx context.Context, t *testing.T, n int) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "pay-%d", i), Value: []byte("{}")})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return c
}

// fastGuard is a Guard under the prefix "g:" with lease and a retry budget
// of two quick attempts.
func fastGuard(t *testing.T, rdb redis.UniversalClient, lease time.Duration) *sink.Guard {
	t.Helper()
	g, err := sink.NewGuard(rdb, sink.WithPrefix("g:"), sink.WithLease(lease),
		sink.WithRetry(sink.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 2}))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// nextOwner runs a pipeline with opts until commits reports offset n (the
// whole partition committed), then closes it and returns it.
func nextOwner(ctx context.Context, t *testing.T, opts []GroupOpt, commits <-chan int64, n int64) *Pipeline {
	t.Helper()
	p, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	for off := int64(0); off < n; {
		select {
		case off = <-commits:
		case <-ctx.Done():
			t.Fatalf("the next owner committed %d of %d", off, n)
		}
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return p
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// logSeen is a slog.Handler that closes seen at the first record with
// message msg, and keeps every message in msgs when it is not nil.
type logSeen struct {
	msg  string
	once *sync.Once
	seen chan struct{}
	mu   *sync.Mutex
	msgs *[]string
}

func (l logSeen) Enabled(context.Context, slog.Level) bool { return true }
func (l logSeen) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l logSeen) WithGroup(string) slog.Handler            { return l }
func (l logSeen) Handle(_ context.Context, r slog.Record) error {
	if r.Message == l.msg {
		l.once.Do(func() { close(l.seen) })
	}
	if l.msgs != nil {
		l.mu.Lock()
		*l.msgs = append(*l.msgs, r.Message)
		l.mu.Unlock()
	}
	return nil
}

// TestStopTimeoutWhileFinishing: a pipeline closed while Redis stays down
// past its shutdown timeout returns at that timeout (it does not wait
// again for the worker when the client leaves the group), although the
// worker's unknown batch is not finished; the worker goes on in the
// background while pay-1's pending claim holds its lease, and marks it
// done once Redis is back. The timeout's warning says so: the worker made
// its final commit and is only marking effects done, not abandoning the
// partition without its final commit.
func TestStopTimeoutWhileFinishing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := payments(ctx, t, 2)
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	defer rdb.Close()
	g := fastGuard(t, rdb, 30*time.Second)
	var runs atomic.Int32
	effect := func(_ context.Context, key string, _ *sink.Record) error {
		runs.Add(1)
		if key == "pay-1" {
			mr.SetError("LOADING Redis is loading the dataset in memory")
		}
		return nil
	}
	app := &stalling{Applier: Guarded(g, effect), failed: make(chan struct{}), release: make(chan struct{})}
	close(app.release) // retries fail at once: Redis stays down
	var msgs []string
	marked := logSeen{msg: "term ended with a batch whose outcome was unknown: marked done the effects that ran",
		once: &sync.Once{}, seen: make(chan struct{}), mu: &sync.Mutex{}, msgs: &msgs}
	const shutdown = 300 * time.Millisecond
	p, err := New(Brokers(c.ListenAddrs()...), Topics("orders"), Group("g"), Sink(app), MaxBatch(2), CommitEvery(2),
		ShutdownTimeout(shutdown), Logger(slog.New(marked)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-app.failed:
	case <-ctx.Done():
		t.Fatal("the done write never failed")
	}
	start := time.Now()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Close took %v with a %v shutdown timeout; want it back at about the timeout", took, shutdown)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	marked.mu.Lock()
	logged := strings.Join(msgs, "\n")
	marked.mu.Unlock()
	if strings.Contains(logged, "without its final commit") || !strings.Contains(logged, "shutdown timeout: leaving a partition whose final commit was made") {
		t.Errorf("logged:\n%s\nwant the shutdown timeout to say the final commit was made and effects are still being marked done", logged)
	}
	if v, _ := mr.Get("g:pay-1"); v == "" || strings.Contains(v, `"state":"done"`) {
		t.Fatalf("pay-1's claim while Redis was down: %q, want pending", v)
	}
	mr.SetError("")
	select {
	case <-marked.seen:
	case <-ctx.Done():
		t.Fatal("the worker never marked pay-1 done once Redis was back")
	}
	if cl, ok, err := g.Lookup(ctx, "pay-1"); err != nil || !ok || cl.State != sink.ClaimDone {
		t.Errorf("claim of pay-1: %+v, %v, %v; want done", cl, ok, err)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("effects ran %d times, want 2 (pay-0, pay-1)", n)
	}
}
