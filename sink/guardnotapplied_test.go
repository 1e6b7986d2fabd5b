package sink

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/shardpipe/shardpipe/internal/faults/guardfault"
)

// TestGuardEffectCertainlyNotApplied: an effect that certainly did not
// happen is never taken as done, even when its context ended: the effect
// is not started once its context has ended before the call (a partition
// lost, a process frozen past the lease), and an effect that says it sent
// nothing (ErrNotApplied) has its claim released. Finish then marks
// nothing done, and the record's next Do runs the effect. Marking such a
// record done would lose its effect: the next owner would take it as done.
func TestGuardEffectCertainlyNotApplied(t *testing.T) {
	for _, tc := range []struct {
		name string
		// ctx returns Do's context and what the effect does with its own.
		ctx    func(ctx context.Context, cancel context.CancelFunc) context.Context
		effect func(ctx context.Context) error
		// ran: whether the effect function is called at all.
		ran bool
	}{
		{
			name: "context ended between the claim and the effect",
			ctx: func(ctx context.Context, cancel context.CancelFunc) context.Context {
				return guardfault.With(ctx, guardfault.Points{AfterClaim: func(context.Context, string) error {
					cancel()
					return nil
				}})
			},
			effect: func(ctx context.Context) error { return ctx.Err() },
		},
		{
			name: "effect sent nothing before its context ended",
			ctx:  func(ctx context.Context, _ context.CancelFunc) context.Context { return ctx },
			effect: func(ctx context.Context) error {
				return fmt.Errorf("POST /charge: dial: %w: %w", ErrNotApplied, context.Canceled)
			},
			ran: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c := newRedis(t)
			g := newGuard(t, c)
			r := order(0, 1, "o1", "c", 1)
			base, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx := tc.ctx(base, cancel)
			var called atomic.Int32
			_, err := g.Do(ctx, &r, func(ectx context.Context, _ string) error {
				called.Add(1)
				return tc.effect(ectx)
			})
			if err == nil {
				t.Fatal("Do reported success for an effect that did not happen")
			}
			if errors.Is(err, ErrUnknown) {
				t.Errorf("Do = %v: want a certain failure, not ErrUnknown", err)
			}
			if !errors.Is(err, ErrNotApplied) {
				t.Errorf("Do = %v: want it to wrap ErrNotApplied", err)
			}
			if got := called.Load() == 1; got != tc.ran {
				t.Errorf("effect called: %v, want %v", got, tc.ran)
			}
			if m.Exists("shardpipe:guard:o1") {
				v, _ := m.Get("shardpipe:guard:o1")
				t.Errorf("the key holds %s after an effect that did not happen: want the claim released", v)
			}
			finished, ferr := g.Finish(context.Background(), &r)
			if finished || ferr != nil {
				t.Errorf("Finish = %v, %v: want nothing to finish (the effect did not happen)", finished, ferr)
			}
			if cl, ok, _ := g.Lookup(context.Background(), "o1"); ok {
				t.Fatalf("after Finish the key holds a %s claim: the next owner would not run the effect", cl.State)
			}
			var runs atomic.Int32
			out, err := g.Do(context.Background(), &r, func(context.Context, string) error { runs.Add(1); return nil })
			if err != nil || out != Applied || runs.Load() != 1 {
				t.Errorf("next Do = %v, %v, runs %d; want Applied with the effect run once", out, err, runs.Load())
			}
		})
	}
}
