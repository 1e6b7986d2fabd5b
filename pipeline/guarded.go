package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardpipe/shardpipe/sink"
)

// ExternalEffect performs one record's effect outside Redis (a payment call,
// an email). It gets the business key: pass it to the external system as its
// idempotency key, which closes the one window guard mode leaves open (a
// crash after the effect, before it is marked done).
type ExternalEffect func(ctx context.Context, key string, r *sink.Record) error

// Guarded adapts a sink.Guard and an external effect to an Applier: each
// record of a batch runs through Guard.Do in order (one claim, the effect and
// one done write per record, so a batch costs about three round trips per
// record plus the effect). A record without a usable key is a poison
// record: retried, then dead-lettered or stopping the pipeline. A refusal
// no retry can fix (sink.ErrMisconfigured: a guard key holding something
// other than a guard claim) is that record's Result.Err, the records after
// it are not attempted, and the pipeline stops there after committing the
// ones before it. Any other failure (the effect's error, Redis, a lost
// lease) makes the batch's outcome unknown: the pipeline applies it again,
// and records already done are recognised as this term's own work.
func Guarded(g *sink.Guard, effect ExternalEffect) Applier {
	return guarded{g: g, effect: effect}
}

type guarded struct {
	g      *sink.Guard
	effect ExternalEffect
}

func (a guarded) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	results := make([]sink.Result, len(batch))
	for i := range batch {
		r := &batch[i]
		key, err := a.g.Key(r)
		if err == nil {
			var out sink.Outcome
			out, err = a.g.Do(ctx, r, func(ctx context.Context, k string) error { return a.effect(ctx, k, r) })
			results[i] = sink.Result{Key: key, Outcome: out}
		}
		switch {
		case errors.Is(err, sink.ErrNoKey) || errors.Is(err, sink.ErrBadValue):
			results[i] = sink.Result{Key: key, Err: err}
		case errors.Is(err, sink.ErrMisconfigured):
			// No retry fixes it: the record is refused, the ones before it
			// keep their outcomes and the rest are not attempted.
			results[i] = sink.Result{Key: key, Err: err}
			for j := i + 1; j < len(batch); j++ {
				results[j].Err = fmt.Errorf("sink: %s/%d@%d: not attempted after offset %d was refused: %w",
					batch[j].Topic, batch[j].Partition, batch[j].Offset, r.Offset, sink.ErrMisconfigured)
			}
			return results, nil
		case err != nil:
			return nil, err
		}
	}
	return results, nil
}
