package sink

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var errCrash = errors.New("injected crash")

func newGuard(t *testing.T, c redis.UniversalClient, opts ...Option) *Guard {
	t.Helper()
	g, err := NewGuard(c, append([]Option{WithRetry(fastRetry()), WithLease(time.Second)}, opts...)...)
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
	if out, err := g.Do(ctx, &replay, n.effect); out != Suppressed || err != nil {
		t.Errorf("replay Do = %v, %v", out, err)
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
	crashing := newGuard(t, c, WithHooks(Hooks{AfterClaim: func(context.Context, string) error { return errCrash }}))
	if _, err := crashing.Do(ctx, &r, n.effect); !errors.Is(err, errCrash) {
		t.Fatalf("crash Do err = %v", err)
	}
	if n.n.Load() != 0 || !m.Exists("shardpipe:guard:o1") {
		t.Fatal("crash after claim: want a pending claim and no effect")
	}
	fresh := newGuard(t, c)
	replay := withEpoch(r, 2)
	done := make(chan error, 1)
	go func() {
		out, err := fresh.Do(ctx, &replay, n.effect)
		if err == nil && out != Applied {
			err = errors.New("replay " + out.String())
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // the replay polls the live claim
	if n.n.Load() != 0 {
		t.Fatal("replay ran the effect under a live claim")
	}
	m.FastForward(time.Second) // the lease lapses
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	again := withEpoch(r, 3)
	if out, err := fresh.Do(ctx, &again, n.effect); out != Suppressed || err != nil {
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
	crashing := newGuard(t, c, WithHooks(Hooks{AfterEffect: func(context.Context, string) error { return errCrash }}))
	if _, err := crashing.Do(ctx, &r, effect); !errors.Is(err, errCrash) {
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
	_, c := newRedis(t)
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
	go func() {
		out, err := g.Do(ctx, &zombie, n.effect)
		if err != nil {
			t.Error(err)
		}
		second <- out
	}()
	select {
	case out := <-second:
		t.Fatalf("second Do returned %v while the first held the claim", out)
	case <-time.After(30 * time.Millisecond):
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if out := <-second; out != Suppressed {
		t.Errorf("second Do = %v, want suppressed", out)
	}
	if n.n.Load() != 1 {
		t.Errorf("effect ran %d times", n.n.Load())
	}
}

func TestGuardWaitBoundedByContext(t *testing.T) {
	_, c := newRedis(t)
	var n counter
	r := order(0, 1, "o1", "c", 1)
	crashing := newGuard(t, c, WithHooks(Hooks{AfterClaim: func(context.Context, string) error { return errCrash }}))
	_, _ = crashing.Do(context.Background(), &r, n.effect)
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
	v, err = g.done.Run(ctx, c, []string{"shardpipe:guard:o1"}, pendingOf.Encode(), cl.Encode(), int64(60000),
		`"owner":"someone-else"`).Int64()
	if err != nil || v != 0 {
		t.Fatalf("done by another owner = %v, %v; want 0", v, err)
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
	if _, err := NewGuard(c, WithEffect(Totals{Hash: "h", GroupField: "g", AmountField: "a"})); err == nil {
		t.Error("NewGuard accepted WithEffect")
	}
	if _, err := NewGuard(c, WithLease(0)); err == nil {
		t.Error("NewGuard accepted a zero lease")
	}
}
