package sink

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestGuardFinish: Finish marks done a record whose effect ran and whose
// done write failed (ErrUnknown), whether its lease is live or lapsed with
// nobody claiming since; it never runs an effect, does nothing for records
// whose effect did not run here or that are done, retries Redis errors until
// its context ends (the record stays finishable), and never writes over
// another owner's claim, pending or done.
func TestGuardFinish(t *testing.T) {
	const loading = "LOADING Redis is loading the dataset in memory"
	const lk = "shardpipe:guard:o1"
	for _, tc := range []struct {
		name string
		// before runs after the Do whose done write failed, with Redis
		// failing every call; it returns a context for Finish.
		before  func(t *testing.T, s *finishSetup) context.Context
		want    bool  // Finish wrote done
		wantErr error // nil: no error
		// foreign: the value at the key must be unchanged by Finish.
		foreign bool
	}{
		{name: "lease live", want: true, before: func(t *testing.T, s *finishSetup) context.Context {
			s.m.SetError("")
			return context.Background()
		}},
		{name: "lease lapsed, nobody claimed", want: true, before: func(t *testing.T, s *finishSetup) context.Context {
			s.m.SetError("")
			s.m.FastForward(time.Second)
			return context.Background()
		}},
		{name: "Redis down past the context's deadline and the lease", wantErr: ErrUnknown, before: func(t *testing.T, s *finishSetup) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}},
		// The caller's wait ran out (a process frozen past it), but the
		// pending claim still holds its lease: the done write goes on.
		{name: "context's deadline passed, lease live", want: true, before: func(t *testing.T, s *finishSetup) context.Context {
			s.m.SetError("")
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
			t.Cleanup(cancel)
			return ctx
		}},
		// A cancel (Abort) before the context's deadline ends it at once,
		// lease or not: Redis answers, and still nothing is written.
		{name: "context canceled", wantErr: ErrUnknown, before: func(t *testing.T, s *finishSetup) context.Context {
			s.m.SetError("")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			cancel()
			return ctx
		}},
		{name: "another owner's pending claim", wantErr: ErrLeaseLost, foreign: true, before: func(t *testing.T, s *finishSetup) context.Context {
			s.m.SetError("")
			s.m.FastForward(time.Second)
			crashing := newGuard(t, s.c, WithHooks(Hooks{AfterClaim: func(context.Context, string) error { return errCrash }}))
			resend := order(0, 2, "o1", "c", 1)
			if _, err := crashing.Do(context.Background(), &resend, s.effect); !errors.Is(err, errCrash) {
				t.Fatalf("other owner's Do = %v, want its crash after the claim", err)
			}
			return context.Background()
		}},
		{name: "another owner's done claim", wantErr: ErrLeaseLost, foreign: true, before: func(t *testing.T, s *finishSetup) context.Context {
			s.m.SetError("")
			s.m.FastForward(time.Second)
			resend := order(0, 2, "o1", "c", 1)
			if out, err := newGuard(t, s.c).Do(context.Background(), &resend, s.effect); out != Applied || err != nil {
				t.Fatalf("other owner's Do = %v, %v; want applied", out, err)
			}
			return context.Background()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c := newRedis(t)
			s := &finishSetup{m: m, c: c}
			s.effect = func(context.Context, string) error { s.runs.Add(1); return nil }
			g := newGuard(t, c)
			r := order(0, 1, "o1", "c", 1)
			failing := func(ctx context.Context, key string) error {
				m.SetError(loading) // the outage starts after the effect
				return s.effect(ctx, key)
			}
			if _, err := g.Do(context.Background(), &r, failing); !errors.Is(err, ErrUnknown) {
				t.Fatalf("Do with the done write failing = %v, want ErrUnknown", err)
			}
			ctx := tc.before(t, s)
			ranBefore := s.runs.Load()
			before, _ := m.Get(lk)
			got, err := g.Finish(ctx, &r)
			if got != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("Finish = %v, %v; want %v, %v", got, err, tc.want, tc.wantErr)
			}
			if n := s.runs.Load(); n != ranBefore {
				t.Errorf("Finish ran the effect: %d runs, %d before it", n, ranBefore)
			}
			m.SetError("")
			after, _ := m.Get(lk)
			switch {
			case tc.foreign:
				if after != before {
					t.Errorf("Finish wrote over another owner's claim:\n  was %s\n  now %s", before, after)
				}
			case tc.want:
				cl, ok, err := g.Lookup(context.Background(), "o1")
				if err != nil || !ok || cl.State != ClaimDone || !cl.Names(&r) {
					t.Errorf("claim %+v, %v, %v; want done for the record", cl, ok, err)
				}
				if ttl := m.TTL(lk); ttl != 7*24*time.Hour {
					t.Errorf("done claim TTL %v, want the TTL", ttl)
				}
				if again, err := g.Finish(context.Background(), &r); again || err != nil {
					t.Errorf("second Finish = %v, %v; want nothing to finish", again, err)
				}
			default: // Redis was down: the record can still be finished
				if again, err := g.Finish(context.Background(), &r); !again || err != nil {
					t.Errorf("Finish once Redis is back = %v, %v; want done", again, err)
				}
			}
		})
	}
}

// finishSetup is one TestGuardFinish case's Redis and effect counter.
type finishSetup struct {
	m      *miniredis.Miniredis
	c      redis.UniversalClient
	runs   atomic.Int32
	effect func(context.Context, string) error
}

// TestGuardFinishNothingToDo: Finish does nothing, with no round trip, for
// a record whose effect did not run in this process (it failed and its
// claim was released; or another Guard ran it) or that Do marked done.
func TestGuardFinishNothingToDo(t *testing.T) {
	ctx := context.Background()
	m, c := newRedis(t)
	h := watchCalls(c)
	g := newGuard(t, c)
	failed, done, elsewhere := order(0, 1, "o1", "c", 1), order(0, 2, "o2", "c", 1), order(0, 3, "o3", "c", 1)
	if _, err := g.Do(ctx, &failed, func(context.Context, string) error { return errors.New("refused") }); err == nil {
		t.Fatal("Do of a failing effect succeeded")
	}
	var n counter
	if out, err := g.Do(ctx, &done, n.effect); out != Applied || err != nil {
		t.Fatalf("Do = %v, %v", out, err)
	}
	if out, err := newGuard(t, c).Do(ctx, &elsewhere, n.effect); out != Applied || err != nil {
		t.Fatalf("other Guard's Do = %v, %v", out, err)
	}
	sent := h.n.Load()
	m.SetError("LOADING Redis is loading the dataset in memory") // a round trip would fail
	for _, r := range []*Record{&failed, &done, &elsewhere} {
		if ok, err := g.Finish(ctx, r); ok || err != nil {
			t.Errorf("Finish(%s) = %v, %v; want nothing to finish", r.at(), ok, err)
		}
	}
	if got := h.n.Load(); got != sent {
		t.Errorf("Finish sent %d commands, want none", got-sent)
	}
}
