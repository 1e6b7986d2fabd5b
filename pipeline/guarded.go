package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/shardpipe/shardpipe/secure"
	"github.com/shardpipe/shardpipe/sink"
)

// ExternalEffect performs one record's effect outside Redis (a payment call,
// an email). It gets the business key: pass it to the external system as its
// idempotency key, which closes the one window guard mode leaves open (a
// crash after the effect, before it is marked done). An error wrapping
// sink.ErrNotApplied says the effect certainly did not happen (nothing was
// sent) even though its context ended: the record is then run again rather
// than taken as done.
type ExternalEffect func(ctx context.Context, key string, r *sink.Record) error

// Guarded adapts a sink.Guard and an external effect to an Applier: each
// record of a batch runs through Guard.Do in order (one claim, the effect and
// one done write per record, so a batch costs about three round trips per
// record plus the effect; with tracing on, a suppressed or redelivered
// record costs one GET more to name the span that applied its key). The
// effect's error is passed through secure.RedactError. A
// record without a usable key is a poison
// record: retried, then dead-lettered or stopping the pipeline. A refusal
// no retry can fix (sink.ErrMisconfigured: a guard key holding something
// other than a guard claim) is that record's Result.Err, the records after
// it are not attempted, and the pipeline stops there after committing the
// ones before it. An effect refused for good (its error wraps
// sink.ErrRejected: a 4xx) is that record's failure: it is not applied
// again by a retry but goes down the path of records that fail for good
// (see DeadLetterMaxRun), and the batch goes on. An effect whose system is
// down (its error wraps sink.ErrUnavailable) is retried until it lands or
// the term ends, its attempts not counted (EffectAttempts). Any other failure (the
// effect's error, Redis, a lost lease) stops the batch at that record:
// the pipeline lands the records before it, then applies again from it
// with a backoff that starts over after the progress; an effect that
// succeeded is not run again, only marked done (one whose outcome is
// unknown is, with the same key).
//
// The Applier is a Finisher: when the term ends before such a retry (the
// partition moved, the pipeline stopping), the worker marks done the
// records whose effects succeeded in this process, without running any (see
// sink.Guard.Finish), within the time the pipeline waits for it or, if
// later, before their pending claims' leases would lapse.
func Guarded(g *sink.Guard, effect ExternalEffect) Applier {
	return guarded{g: g, effect: effect}
}

var _ Finisher = guarded{}

// guarded is Guarded (effect set) or GuardedBatch (batch set).
type guarded struct {
	g      *sink.Guard
	effect ExternalEffect
	batch  BatchEffect
}

// attempt is what Guard.Do did with one record: its key, outcome and
// error, and the effect's own error when the effect ran and failed.
type attempt struct {
	key    string
	out    sink.Outcome
	err    error
	effErr error
}

// Key is the guard's business key of r (Keyer): MaxInFlight orders by it.
func (a guarded) Key(r *sink.Record) (string, error) { return a.g.Key(r) }

func (a guarded) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	results := make([]sink.Result, len(batch))
	for i := 0; i < len(batch); {
		var tries []attempt
		if a.batch != nil {
			tries = a.chain(ctx, batch[i:])
		} else {
			tries = []attempt{a.one(ctx, &batch[i])}
		}
		for j, t := range tries {
			if a.judge(ctx, batch, i+j, t, results) {
				return results, nil
			}
		}
		i += len(tries)
	}
	return results, nil
}

// one runs r through Guard.Do with the effect.
func (a guarded) one(ctx context.Context, r *sink.Record) attempt {
	key, err := a.g.Key(r)
	if err != nil {
		return attempt{key: key, err: err}
	}
	t := attempt{key: key}
	t.out, t.err = a.g.Do(ctx, r, func(ctx context.Context, k string) error {
		ctx, span := effectSpan(ctx, r)
		// Its text reaches logs, traces, /status and dead-letter
		// headers: no URL's password or query value in it.
		t.effErr = secure.RedactError(a.effect(ctx, k, r))
		endEffectSpan(span, t.effErr)
		return t.effErr
	})
	return t
}

// judge sets results[i] from t, the attempt of batch[i]; true when the
// records after it are not to be attempted (their results are set so).
func (a guarded) judge(ctx context.Context, batch []sink.Record, i int, t attempt, results []sink.Result) bool {
	r, key, err := &batch[i], t.key, t.err
	if err != nil && t.effErr != nil && ctx.Err() == nil && !errors.Is(err, sink.ErrUnknown) && !errors.Is(err, sink.ErrLeaseLost) &&
		!errors.Is(t.effErr, sink.ErrUnavailable) {
		// The effect failed and did not happen: its claim was released.
		// (Not when the term is ending: a call cut short by the stop
		// is no attempt to count against the record; nor when the
		// effect's system is down, which says nothing of the record.)
		err = fmt.Errorf("%s/%d offset %d key %s: %w: %w", r.Topic, r.Partition, r.Offset, sink.QuoteKey(key), ErrEffectFailed, err)
	}
	if err == nil {
		results[i] = sink.Result{Key: key, Outcome: t.out}
		if (t.out == sink.Suppressed || t.out == sink.Redelivered) && traced(r) {
			results[i].Applier = a.applier(ctx, key)
		}
		return false
	}
	results[i] = sink.Result{Key: key, Err: err}
	switch {
	case errors.Is(err, sink.ErrNoKey) || errors.Is(err, sink.ErrBadValue):
		return false
	case errors.Is(err, sink.ErrMisconfigured):
		// No retry fixes it: the record is refused, the ones before it
		// keep their outcomes and the rest are not attempted.
		for j := i + 1; j < len(batch); j++ {
			results[j] = sink.Result{Err: fmt.Errorf("sink: %s/%d@%d: not attempted after offset %d was refused: %w",
				batch[j].Topic, batch[j].Partition, batch[j].Offset, r.Offset, sink.ErrMisconfigured)}
		}
		return true
	case errors.Is(err, ErrEffectFailed) && errors.Is(err, sink.ErrRejected):
		// Refused for good and not applied (its claim released): the
		// record's own failure, like a poison record's; the rest go on.
		return false
	}
	// This record's outcome is unknown or it failed: the records before it
	// are known, so the pipeline lands them and applies again from this
	// one; the rest are not taken as attempted.
	for j := i + 1; j < len(batch); j++ {
		results[j] = sink.Result{Err: fmt.Errorf("sink: %s/%d@%d: not attempted after offset %d failed: %w",
			batch[j].Topic, batch[j].Partition, batch[j].Offset, r.Offset, errNotAttempted)}
	}
	return true
}

// errNotAttempted is the Result.Err of a batch's records after one whose
// outcome is unknown: a failure that says nothing about the record, so the
// pipeline applies them again.
var errNotAttempted = errors.New("pipeline: not attempted")

// applier is the span that applied key, from its claim (one GET, made only
// for a traced record that was not applied here); zero when unknown.
func (a guarded) applier(ctx context.Context, key string) trace.SpanContext {
	c, ok, err := a.g.Lookup(ctx, key)
	if err != nil || !ok {
		return trace.SpanContext{}
	}
	sc, _ := c.Span()
	return sc
}

// traced reports whether r carries a valid span.
func traced(r *sink.Record) bool {
	return r.Context != nil && trace.SpanContextFromContext(r.Context).IsValid()
}

// Finish marks done, in order, each record of batch whose effect ran in
// this process under the record's term and is not marked done yet
// (sink.Guard.Finish: retried until ctx's deadline or, if later, until the
// record's lease would lapse; a cancel of ctx stops it). It runs no effect
// and costs one round trip per record it marks (none for the others). The
// error names the offsets left, with the first one's cause.
func (a guarded) Finish(ctx context.Context, batch []sink.Record) (finished, left int, err error) {
	var first error
	var offsets []string
	for i := range batch {
		ok, ferr := a.g.Finish(ctx, &batch[i])
		switch {
		case ok:
			finished++
		case ferr != nil:
			left++
			if first == nil {
				first = ferr
			}
			if len(offsets) < maxNamed {
				offsets = append(offsets, strconv.FormatInt(batch[i].Offset, 10))
			}
		}
	}
	if left == 0 {
		return finished, 0, nil
	}
	more := ""
	if left > len(offsets) {
		more = fmt.Sprintf(" and %d more", left-len(offsets))
	}
	return finished, left, fmt.Errorf("%s/%d offsets %s%s: effects ran but are not marked done: %w",
		batch[0].Topic, batch[0].Partition, strings.Join(offsets, ","), more, first)
}

// maxNamed is how many offsets an error names at most.
const maxNamed = 10
