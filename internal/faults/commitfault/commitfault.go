// Package commitfault carries a fault point of checkpoint.Kafka's commits
// in a context: a function run on each OffsetCommit request as franz-go
// builds it, before the store's own member check (see checkpoint.Kafka).
// It imports nothing of shardpipe, so that package checkpoint can read it;
// scenarios set it with With. Production code sets none.
//
// franz-go carries one such function per context (kgo.PreCommitFnContext),
// and the store sets its own there, which would hide a caller's: this
// package is how a test still rewrites a commit (the zombie scenario sends
// one with a member's old generation).
package commitfault

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type key struct{}

// With returns ctx carrying fn, run on each OffsetCommit request of a
// commit made with ctx; an error from fn fails the commit unsent.
func With(ctx context.Context, fn func(*kmsg.OffsetCommitRequest) error) context.Context {
	return context.WithValue(ctx, key{}, fn)
}

// From returns the function ctx carries, nil when none (one context
// lookup, no allocation).
func From(ctx context.Context) func(*kmsg.OffsetCommitRequest) error {
	fn, _ := ctx.Value(key{}).(func(*kmsg.OffsetCommitRequest) error)
	return fn
}
