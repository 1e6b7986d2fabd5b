package pipeline

import (
	"context"

	"github.com/shardpipe/shardpipe/sink"
)

// shell is an Applier assembled from parts (Wrap, ByTopic): its Apply, the
// Applier it wraps, and a Key and a Finish when it has them. assemble
// returns it as a type whose methods are exactly the parts set, so a type
// assertion for Keyer or Finisher answers what the parts are.
type shell struct {
	apply ApplyFunc
	inner Applier // what Unwrap returns; nil when it wraps several (ByTopic)
	key   func(r *sink.Record) (string, error)
	fin   func(ctx context.Context, batch []sink.Record) (int, int, error)
	ext   bool // its effects are external (see external)
}

// capable is a shell, whatever its optional methods.
type capable interface{ external() bool }

// Apply runs the shell's apply part.
func (s *shell) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	return s.apply(ctx, batch)
}

// Unwrap returns the Applier s wraps: the convention Wrap documents.
func (s *shell) Unwrap() Applier { return s.inner }

func (s *shell) external() bool { return s.ext }

// assemble returns s with the optional methods its parts have.
func (s *shell) assemble() Applier {
	switch {
	case s.key != nil && s.fin != nil:
		return keyFinShell{s}
	case s.key != nil:
		return keyShell{s}
	case s.fin != nil:
		return finShell{s}
	}
	return s
}

// keyShell is a shell that is a Keyer.
type keyShell struct{ *shell }

func (s keyShell) Key(r *sink.Record) (string, error) { return s.key(r) }

// finShell is a shell that is a Finisher.
type finShell struct{ *shell }

func (s finShell) Finish(ctx context.Context, batch []sink.Record) (int, int, error) {
	return s.fin(ctx, batch)
}

// keyFinShell is a shell that is a Keyer and a Finisher.
type keyFinShell struct{ *shell }

func (s keyFinShell) Key(r *sink.Record) (string, error) { return s.key(r) }

func (s keyFinShell) Finish(ctx context.Context, batch []sink.Record) (int, int, error) {
	return s.fin(ctx, batch)
}
