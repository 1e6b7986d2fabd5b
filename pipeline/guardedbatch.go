package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/shardpipe/shardpipe/secure"
	"github.com/shardpipe/shardpipe/sink"
)

// BatchEffect performs the effects of recs in one call, in order (one
// database transaction, say): keys[i] is recs[i]'s business key. It returns
// one error per record, each read as an ExternalEffect's error is: nil when
// that record's effect happened, sink.ErrNotApplied when it certainly did
// not, sink.ErrRejected when the record is refused for good, and so on. A
// record whose effect cannot be known to have happened or not (a COMMIT
// whose answer was lost) must get an error: it is run again with the same
// key, so the effect must find a key it applied before (pgeffect's inbox).
type BatchEffect func(ctx context.Context, keys []string, recs []*sink.Record) []error

// GuardedBatch is Guarded with one call of effect for a batch's records
// instead of one per record: each record is claimed through Guard.Do as
// with Guarded (a claim, then a done write per record, with its lease kept
// while the effect runs), but the effect of all the claimed records of a
// run of distinct keys runs once, when the last is claimed, and each
// record's claim is then marked done or given back by that record's
// error. Every promise of Guarded holds per record; what changes is the
// cost: one effect call per run of the batch's records, and the records of
// a call share one context, the first record's effect context (it ends a
// fifth of the lease after that record's claim, whatever the renewals).
// A run ends, and the records after it go to the next call, at a key that
// comes again in the batch (its second record would wait for the first's
// claim), at a key another owner holds pending (it is not waited for while
// claims are held, so two batches claiming the same keys in other orders
// cannot wait for each other: sink.WithoutWaiting), and once claiming has
// taken half of the first record's effect time (the rest is the call's).
// An effect that returns the wrong number of errors leaves every record of
// the call unknown (sink.ErrUnknown): claims kept pending, run again.
//
// In batches (MaxInFlight 0) a call gets up to BatchSize records; with
// MaxInFlight each record is its own batch, so a call gets one.
func GuardedBatch(g *sink.Guard, effect BatchEffect) Applier {
	return guarded{g: g, batch: effect}
}

// chain runs Guard.Do for batch's records one inside the effect of the
// one before, so that every claim is held when the batch effect runs once
// for the claimed records (inside the innermost Do), and each Do then ends
// with its own record's error. It stops before a key the run holds already,
// and after a record whose Do failed without running the effect (its claim
// not taken: the pipeline applies again from it). It returns the attempts
// of the records it went through, at least one.
func (a guarded) chain(ctx context.Context, batch []sink.Record) []attempt {
	c := &chainRun{a: a, batch: batch, tries: make([]attempt, 0, len(batch)), held: make(map[string]bool, len(batch))}
	c.step(ctx)
	return c.tries
}

// chainRun is one chain's state: the attempts so far and the records
// whose effect is to run (claimed: their indexes in batch), by key.
type chainRun struct {
	a       guarded
	batch   []sink.Record
	tries   []attempt
	claimed []int
	held    map[string]bool
	errs    []error   // the batch effect's, by position in claimed
	claimBy time.Time // once a claim is held: when claiming stops
}

// step attempts the records from the next one on: those done before (or
// without a key) in turn, the first to claim its key by nesting the rest
// in its effect; the effect runs when the chain ends. Once a claim is
// held, a record whose key another owner holds pending ends the chain
// before it (sink.WithoutWaiting: waiting while holding claims could wait
// for an owner that waits for ours), and so does the half of the first
// claim's effect time spent on claiming (the rest is the effect's).
func (c *chainRun) step(ctx context.Context) {
	for {
		i := len(c.tries)
		if i == len(c.batch) || len(c.claimed) > 0 && time.Now().After(c.claimBy) {
			c.run(ctx)
			return
		}
		r := &c.batch[i]
		key, err := c.a.g.Key(r)
		if err == nil && c.held[key] {
			c.run(ctx) // its record would wait for our own claim: a new chain takes it
			return
		}
		c.tries = append(c.tries, attempt{key: key, err: err})
		if err != nil {
			continue // no key: the record's own failure; the chain goes on
		}
		c.held[key] = true
		dctx := ctx
		if len(c.claimed) > 0 {
			dctx = sink.WithoutWaiting(ctx)
		}
		called := false
		out, err := c.a.g.Do(dctx, r, func(ectx context.Context, _ string) error {
			called = true
			if len(c.claimed) == 0 {
				if dl, ok := ectx.Deadline(); ok {
					c.claimBy = time.Now().Add(time.Until(dl) / 2)
				}
			}
			at := len(c.claimed)
			c.claimed = append(c.claimed, i)
			c.step(ectx)
			c.tries[i].effErr = c.errs[at]
			return c.errs[at]
		})
		c.tries[i].out, c.tries[i].err = out, err
		switch {
		case called:
			return // the records after it went through inside its effect
		case errors.Is(err, sink.ErrClaimBusy):
			c.tries, c.held[key] = c.tries[:i], false // not attempted: a new chain waits for it, holding nothing
			c.run(ctx)
			return
		case err != nil:
			c.run(ctx) // failed before its effect: the chain ends with it
			return
		}
		c.held[key] = false // done before: a later record of it waits for nothing
	}
}

// run calls the batch effect once for the claimed records, under ctx (the
// innermost effect's context), with a span per record.
func (c *chainRun) run(ctx context.Context) {
	if len(c.claimed) == 0 {
		return
	}
	keys, recs := make([]string, len(c.claimed)), make([]*sink.Record, len(c.claimed))
	spans := make([]trace.Span, len(c.claimed))
	for at, i := range c.claimed {
		keys[at], recs[at] = c.tries[i].key, &c.batch[i]
		_, spans[at] = effectSpan(ctx, recs[at])
	}
	c.errs = c.a.batch(ctx, keys, recs)
	if len(c.errs) != len(keys) {
		bad := fmt.Errorf("%w: pipeline: GuardedBatch: the effect returned %d results for %d records, so what each did is unknown",
			sink.ErrUnknown, len(c.errs), len(keys))
		c.errs = make([]error, len(keys))
		for at := range c.errs {
			c.errs[at] = bad
		}
	}
	for at := range c.claimed {
		// Its text reaches logs, traces, /status and dead-letter
		// headers: no URL's password or query value in it.
		c.errs[at] = secure.RedactError(c.errs[at])
		endEffectSpan(spans[at], c.errs[at])
	}
}
