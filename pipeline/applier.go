package pipeline

import (
	"context"

	"github.com/shardpipe/shardpipe/sink"
)

// Applier is the effect boundary: sink.Ledger in record mode, Guarded for
// external effects. Apply returns one result per record, or an error when the
// batch's effects are unknown (the pipeline then applies it again and does not
// commit past it).
//
// The pipeline also looks for optional interfaces on it: Keyer and
// Finisher, and whether it is Guarded. It looks at the Applier, then down
// its Unwrap chain: an Applier that wraps another keeps these when it is
// built with Wrap, or has a method Unwrap() Applier returning the wrapped
// one (see Wrap); one that only embeds Applier loses them.
type Applier interface {
	// Apply lands the effects of batch, in order, and returns one Result
	// per record at its index: Applied, Suppressed or Redelivered, or a
	// per-record Err (a poison record: sink.ErrNoKey, ErrBadValue,
	// ErrCrossSlot; a refusal no retry fixes: sink.ErrMisconfigured). An
	// error means the batch's effects are unknown: the pipeline applies it
	// again, so Apply must be idempotent per record and term (Record.Epoch,
	// Member, Group). ctx ends when the partition is lost or the run aborts.
	Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error)
}
