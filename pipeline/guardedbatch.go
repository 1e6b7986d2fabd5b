package pipeline

import (
	"context"

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
// cost: one effect call per batch (per run of distinct keys: a key that
// comes again in the batch starts a new call once the first is done, since
// its second record waits for the first's claim), and the records of a
// call share its context, which ends when any of their leases would lapse.
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
	errs    []error // the batch effect's, by position in claimed
}

// step attempts the records from the next one on: those done before (or
// without a key) in turn, the first to claim its key by nesting the rest
// in its effect; the effect runs when the chain ends.
func (c *chainRun) step(ctx context.Context) {
	for {
		i := len(c.tries)
		if i == len(c.batch) {
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
		called := false
		out, err := c.a.g.Do(ctx, r, func(ectx context.Context, _ string) error {
			called = true
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
		case err != nil:
			c.run(ctx) // failed before its effect: the chain ends with it
			return
		}
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
	for at := range c.claimed {
		// Its text reaches logs, traces, /status and dead-letter
		// headers: no URL's password or query value in it.
		c.errs[at] = secure.RedactError(c.errs[at])
		endEffectSpan(spans[at], c.errs[at])
	}
}
