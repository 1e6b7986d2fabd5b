package sink

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/internal/faults/guardfault"
)

var errCrash = errors.New("injected crash")

func newGuard(t *testing.T, c redis.UniversalClient, opts ...GuardOpt) *Guard {
	t.Helper()
	g, err := NewGuard(c, append([]GuardOpt{WithRetry(fastRetry()), WithLease(time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// counter is an external effect that counts its runs.
type counter struct{ n atomic.Int32 }

func (c *counter) effect(context.Context, string) error { c.n.Add(1); return nil }

func TestGuardDoneSuppresses(t *testing.T) {
	ctx := context.Background()
	m, c := newRedis(t)
	g := newGuard(t, c, WithTTL(time.Hour))
	var n counter
	r := order(0, 1, "o1", "c", 1)
	if out, err := g.Do(ctx, &r, n.effect); out != Applied || err != nil {
		t.Fatalf("first Do = %v, %v", out, err)
	}
	if got := m.TTL("shardpipe:guard:o1"); got != time.Hour {
		t.Errorf("done TTL = %v, want 1h", got)
	}
	cl, ok, err := g.Lookup(ctx, "o1")
	if err != nil || !ok || cl.State != ClaimDone || !cl.Names(&r) || cl.Owner == "" {
		t.Errorf("Lookup = %+v, %v, %v", cl, ok, err)
	}
	replay := withEpoch(r, 2)
	if out, err := g.Do(ctx, &replay, n.effect); out != Redelivered || err != nil {
		t.Errorf("replay Do = %v, %v; want redelivered (its own record's claim)", out, err)
	}
	resend := order(0, 2, "o1", "c", 1)
	if out, err := g.Do(ctx, &resend, n.effect); out != Suppressed || err != nil {
		t.Errorf("re-send Do = %v, %v; want suppressed", out, err)
	}
	if out, err := g.Do(ctx, &r, n.effect); out != Applied || err != nil {
		t.Errorf("same record, same epoch = %v, %v; want applied (its own claim)", out, err)
	}
	if got := n.n.Load(); got != 1 {
		t.Errorf("effect ran %d times, want 1", got)
	}
}

func TestGuardExpiredLeaseRerunsOnce(t *testing.T) {
	ctx := context.Background()
	m, c := newRedis(t)
	var n counter
	r := order(0, 1, "o1", "c", 1)
	crashing := newGuard(t, c)
	crashCtx := guardfault.With(ctx, guardfault.Points{AfterClaim: func(context.Context, string) error { return errCrash }})
	if _, err := crashing.Do(crashCtx, &r, n.effect); !errors.Is(err, errCrash) {
		t.Fatalf("crash Do err = %v", err)
	}
	if n.n.Load() != 0 || !m.Exists("shardpipe:guard:o1") {
		t.Fatal("crash after claim: want a pending claim and no effect")
	}
	fc := client(t, m)
	h := watchCalls(fc)
	fresh := newGuard(t, fc)
	replay := withEpoch(r, 2)
	done := make(chan error, 1)
	go func() {
		out, err := fresh.Do(ctx, &replay, n.effect)
		if err == nil && out != Applied {
			err = errors.New("replay " + out.String())
		}
		done <- err
	}()
	h.await(t, "the replay to find the live claim three times", func() bool { return h.polls.Load() >= 3 })
	if n.n.Load() != 0 {
		t.Fatal("replay ran the effect under a live claim")
	}
	m.FastForward(time.Second) // the lease lapses
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	again := withEpoch(r, 3)
	if out, err := fresh.Do(ctx, &again, n.effect); out != Redelivered || err != nil {
		t.Errorf("third Do = %v, %v", out, err)
	}
	if got := n.n.Load(); got != 1 {
		t.Errorf("effect ran %d times, want exactly 1", got)
	}
}

// TestGuardWindowAfterEffect shows the documented window: a crash after the
// effect and before done runs the effect again, and an idempotency key at
// the external system absorbs it.
func TestGuardWindowAfterEffect(t *testing.T) {
	ctx := context.Background()
	m, c := newRedis(t)
	var runs atomic.Int32
	external := map[string]bool{} // the external system, deduplicating by idempotency key
	effect := func(_ context.Context, key string) error { runs.Add(1); external[key] = true; return nil }
	r := order(0, 1, "o1", "c", 1)
	crashing := newGuard(t, c)
	crashCtx := guardfault.With(ctx, guardfault.Points{AfterEffect: func(context.Context, string) error { return errCrash }})
	if _, err := crashing.Do(crashCtx, &r, effect); !errors.Is(err, errCrash) {
		t.Fatalf("err = %v", err)
	}
	m.FastForward(time.Second)
	replay := withEpoch(r, 2)
	if out, err := newGuard(t, c).Do(ctx, &replay, effect); out != Applied || err != nil {
		t.Fatalf("replay = %v, %v", out, err)
	}
	if runs.Load() != 2 || len(external) != 1 {
		t.Errorf("runs=%d distinct=%d, want the window: 2 runs, 1 distinct key", runs.Load(), len(external))
	}
}

func TestGuardWaitsForLiveForeignClaim(t *testing.T) {
	ctx := context.Background()
	m, c := newRedis(t)
	g := newGuard(t, c)
	var n counter
	started, release := make(chan struct{}), make(chan struct{})
	slow := func(ctx context.Context, key string) error {
		close(started)
		<-release
		return n.effect(ctx, key)
	}
	r := order(0, 1, "o1", "c", 1)
	first := make(chan error, 1)
	go func() { _, err := g.Do(ctx, &r, slow); first <- err }()
	<-started
	second := make(chan Outcome, 1)
	zombie := withEpoch(r, 2)
	zc := client(t, m)
	h := watchCalls(zc)
	zg := newGuard(t, zc)
	go func() {
		out, err := zg.Do(ctx, &zombie, n.effect)
		if err != nil {
			t.Error(err)
		}
		second <- out
	}()
	h.await(t, "the second Do to poll the live claim three times", func() bool { return h.polls.Load() >= 3 })
	select {
	case out := <-second:
		t.Fatalf("second Do returned %v while the first held the claim", out)
	default:
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if out := <-second; out != Redelivered {
		t.Errorf("second Do = %v, want redelivered (the same record's claim)", out)
	}
	if n.n.Load() != 1 {
		t.Errorf("effect ran %d times", n.n.Load())
	}
}

func TestGuardWaitBoundedByContext(t *testing.T) {
	_, c := newRedis(t)
	var n counter
	r := order(0, 1, "o1", "c", 1)
	crashing := newGuard(t, c)
	_, _ = crashing.Do(guardfault.With(context.Background(), guardfault.Points{AfterClaim: func(context.Context, string) error { return errCrash }}), &r, n.effect)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := newGuard(t, c).Do(ctx, &r, n.effect); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want DeadlineExceeded", err)
	}
}

func TestGuardLeaseLost(t *testing.T) {
	ctx := context.Background()
	m, c := newRedis(t)
	g := newGuard(t, c)
	for _, tt := range []struct {
		name  string
		steal func()
		want  error // nil: Applied and marked done
	}{
		// The lease lapsed but nobody claimed the key: the effect ran once,
		// so it is marked done and a replay is suppressed.
		{"expired, unclaimed", func() { m.FastForward(time.Second) }, nil},
		{"taken over", func() { m.FastForward(time.Second); m.Set("shardpipe:guard:o1", `{"state":"pending","owner":"other"}`) }, ErrLeaseLost},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m.FlushAll()
			r := order(0, 1, "o1", "c", 1)
			out, err := g.Do(ctx, &r, func(context.Context, string) error { tt.steal(); return nil })
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Errorf("Do = %v, %v; want %v", out, err, tt.want)
				}
				return
			}
			if err != nil || out != Applied {
				t.Fatalf("Do = %v, %v; want applied", out, err)
			}
			cl, ok, err := g.Lookup(ctx, "o1")
			if err != nil || !ok || cl.State != ClaimDone {
				t.Fatalf("claim %+v, %v, %v; want done", cl, ok, err)
			}
		})
	}
}

// TestGuardDoneRetry: a retry of the done write whose first reply was lost
// finds its own done claim and still reports Applied.
func TestGuardDoneRetry(t *testing.T) {
	ctx := context.Background()
	_, c := newRedis(t)
	g := newGuard(t, c)
	r := order(0, 1, "o1", "c", 1)
	var n counter
	if out, err := g.Do(ctx, &r, n.effect); err != nil || out != Applied {
		t.Fatalf("Do = %v, %v", out, err)
	}
	cl, _, _ := g.Lookup(ctx, "o1")
	pendingOf := cl
	pendingOf.State = ClaimPending
	v, err := g.done.Run(ctx, c, []string{"shardpipe:guard:o1"}, pendingOf.Encode(), cl.Encode(), int64(60000),
		`"owner":"`+cl.Owner+`"`).Int64()
	if err != nil || v != 1 {
		t.Fatalf("done retry over our own done claim = %v, %v; want 1", v, err)
	}
	cur, err := g.done.Run(ctx, c, []string{"shardpipe:guard:o1"}, pendingOf.Encode(), cl.Encode(), int64(60000),
		`"owner":"someone-else"`).Text()
	if err != nil || cur != cl.Encode() {
		t.Fatalf("done by another owner = %v, %v; want the claim there, unchanged", cur, err)
	}
}

func TestGuardEffectErrorReleases(t *testing.T) {
	ctx := context.Background()
	m, c := newRedis(t)
	g := newGuard(t, c)
	r := order(0, 1, "o1", "c", 1)
	boom := errors.New("boom")
	var deadline time.Duration
	_, err := g.Do(ctx, &r, func(ctx context.Context, _ string) error {
		d, _ := ctx.Deadline()
		deadline = time.Until(d)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if deadline <= 0 || deadline > time.Second {
		t.Errorf("effect deadline in %v, want within the 1s lease", deadline)
	}
	if m.Exists("shardpipe:guard:o1") {
		t.Error("failed effect left its pending claim")
	}
	var n counter
	if out, err := g.Do(ctx, &r, n.effect); out != Applied || err != nil || n.n.Load() != 1 {
		t.Errorf("retry = %v, %v, runs %d", out, err, n.n.Load())
	}
}

func TestGuardNoKey(t *testing.T) {
	_, c := newRedis(t)
	var n counter
	if _, err := newGuard(t, c).Do(context.Background(), &Record{Topic: "t"}, n.effect); !errors.Is(err, ErrNoKey) || n.n.Load() != 0 {
		t.Errorf("err = %v, runs %d", err, n.n.Load())
	}
	if _, err := NewGuard(c, WithLease(0)); err == nil {
		t.Error("NewGuard accepted a zero lease")
	}
}

// TestGuardRetryAfterDoneFailedOnlyMarksDone: the effect ran, then Redis
// failed the done write past the retry budget (ErrUnknown). A retry of the
// same record in the same term (what the pipeline does with the batch) must
// not run the effect again, whether the pending claim is still live or its
// lease lapsed meanwhile: it only marks the claim done.
func TestGuardRetryAfterDoneFailedOnlyMarksDone(t *testing.T) {
	for _, lapsed := range []bool{false, true} {
		t.Run(map[bool]string{false: "lease live", true: "lease lapsed"}[lapsed], func(t *testing.T) {
			m, c := newRedis(t)
			g := newGuard(t, c)
			var runs atomic.Int32
			effect := func(context.Context, string) error {
				runs.Add(1)
				m.SetError("LOADING Redis is loading the dataset in memory") // the outage starts after the effect
				return nil
			}
			r := order(0, 1, "o1", "c", 1)
			if _, err := g.Do(context.Background(), &r, effect); !errors.Is(err, ErrUnknown) {
				t.Fatalf("Do with the done write failing = %v, want ErrUnknown", err)
			}
			m.SetError("")
			if lapsed {
				m.FastForward(time.Second)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			out, err := g.Do(ctx, &r, effect)
			if err != nil || out != Applied {
				t.Fatalf("retry = %v, %v; want applied", out, err)
			}
			if n := runs.Load(); n != 1 {
				t.Errorf("effect ran %d times, want 1", n)
			}
			cl, ok, err := g.Lookup(context.Background(), "o1")
			if err != nil || !ok || cl.State != ClaimDone || !cl.Names(&r) {
				t.Errorf("claim %+v, %v, %v; want done for the record", cl, ok, err)
			}
			if got := m.TTL("shardpipe:guard:o1"); got != 7*24*time.Hour {
				t.Errorf("done claim TTL %v, want the TTL", got)
			}
		})
	}
}

// TestGuardEffectContextErrorKeepsClaim: an effect that ends with a context
// error may have landed or not (the call was sent, the answer never came):
// its pending claim is not released, so no other owner runs it before the
// lease lapses; Finish does not take it as done (that would lose an effect
// that did not land); and a retry of the same record and term runs it again
// with the same key, which the external system's idempotency check absorbs.
func TestGuardEffectContextErrorKeepsClaim(t *testing.T) {
	for _, tc := range []struct {
		name   string
		effect func(ctx context.Context, cancel context.CancelFunc) error
	}{
		{"the effect's own timeout", func(context.Context, context.CancelFunc) error {
			return fmt.Errorf("POST /charge: %w", context.DeadlineExceeded)
		}},
		{"the caller's context ends", func(ctx context.Context, cancel context.CancelFunc) error {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c := newRedis(t)
			g := newGuard(t, c)
			var keys []string
			r := order(0, 1, "o1", "c", 1)
			ctx, cancel := context.WithCancel(context.Background())
			_, err := g.Do(ctx, &r, func(ectx context.Context, key string) error {
				keys = append(keys, key)
				return tc.effect(ectx, cancel)
			})
			cancel()
			if !errors.Is(err, ErrUnknown) {
				t.Fatalf("Do = %v, want ErrUnknown for an effect that may or may not have landed", err)
			}
			cl, ok, lerr := g.Lookup(context.Background(), "o1")
			if lerr != nil || !ok || cl.State != ClaimPending {
				t.Fatalf("claim after a context error: %+v, %v, %v; want our pending claim kept", cl, ok, lerr)
			}
			if !m.Exists("shardpipe:guard:o1") {
				t.Fatal("claim released")
			}
			if finished, err := g.Finish(context.Background(), &r); finished || err != nil {
				t.Errorf("Finish = %v, %v: want nothing finished: the effect may not have landed", finished, err)
			}
			if cl, _, _ := g.Lookup(context.Background(), "o1"); cl.State != ClaimPending {
				t.Fatalf("claim after Finish: %s, want still pending", cl.State)
			}
			out, err := g.Do(context.Background(), &r, func(_ context.Context, key string) error {
				keys = append(keys, key)
				return nil
			})
			if err != nil || out != Applied || len(keys) != 2 || keys[1] != keys[0] {
				t.Errorf("retry = %v, %v, calls with keys %q; want applied, the effect called again with the same key", out, err, keys)
			}
			if cl, _, _ := g.Lookup(context.Background(), "o1"); cl.State != ClaimDone {
				t.Errorf("claim after the retry: %s, want done", cl.State)
			}
		})
	}
}

// TestGuardRemembersBounded: what a Guard remembers of unfinished records is
// dropped when they finish, and bounded: past the bound the oldest is
// forgotten first.
func TestGuardRemembersBounded(t *testing.T) {
	m, c := newRedis(t)
	g := newGuard(t, c)
	g.mem.max = 3
	var n counter
	for i := range 5 {
		r := order(0, int64(i), fmt.Sprint("o", i), "c", 1)
		if _, err := g.Do(context.Background(), &r, n.effect); err != nil {
			t.Fatal(err)
		}
	}
	if got := g.mem.len(); got != 0 {
		t.Errorf("remembers %d records after they all finished, want 0", got)
	}
	failDone := func(context.Context, string) error {
		m.SetError("LOADING Redis is loading the dataset in memory")
		return nil
	}
	for i := range 5 {
		m.SetError("")
		r := order(0, int64(10+i), fmt.Sprint("p", i), "c", 1)
		if _, err := g.Do(context.Background(), &r, failDone); !errors.Is(err, ErrUnknown) {
			t.Fatalf("Do = %v, want ErrUnknown", err)
		}
	}
	m.SetError("")
	if got := g.mem.len(); got != 3 {
		t.Errorf("remembers %d unfinished records, want the bound 3", got)
	}
	for i := range 5 {
		r := order(0, int64(10+i), fmt.Sprint("p", i), "c", 1)
		_, ok := g.mem.peek(&r)
		if want := i >= 2; ok != want {
			t.Errorf("record %d remembered %v, want %v (the oldest go first)", i, ok, want)
		}
	}
}
