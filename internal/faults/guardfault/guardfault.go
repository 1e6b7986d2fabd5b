// Package guardfault carries the fault points of sink.Guard.Do in a
// context. It imports nothing of shardpipe, so that package sink can read
// it without importing package checkpoint through package faults; tests and
// scenarios set the points with faults.WithGuard.
package guardfault

import "context"

// Points are the fault points of Guard.Do. A point that returns an error
// makes Do return that error at once and leave Redis exactly as a crash at
// that point would (no release, no done), and the Guard forgets the record
// as a crashed process would: a retry is a new owner. Nil points do
// nothing.
type Points struct {
	// AfterClaim runs after the pending claim is written, before the effect.
	AfterClaim func(ctx context.Context, key string) error
	// AfterEffect runs after the effect succeeded, before the claim is
	// marked done.
	AfterEffect func(ctx context.Context, key string) error
}

type key struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p Points) context.Context {
	return context.WithValue(ctx, key{}, &p)
}

// From returns the points ctx carries, nil when it carries none (the
// production case: one context lookup, no allocation).
func From(ctx context.Context) *Points {
	p, _ := ctx.Value(key{}).(*Points)
	return p
}

// Run runs point h, if set.
func Run(h func(context.Context, string) error, ctx context.Context, key string) error {
	if h == nil {
		return nil
	}
	return h(ctx, key)
}
