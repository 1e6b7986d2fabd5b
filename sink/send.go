package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// write is one claim on its way to Redis and its answer.
type write struct {
	idx   int // index in the batch
	off   int // bounds of the key, then of the claim, in Apply's buffer
	end   int
	key   string // ledger key
	claim string // encoded claim, as a string (the per-key pipeline)
	// claimBytes is the encoded claim in Apply's buffer: the batch claim
	// script sends it from there (claimArg).
	claimBytes []byte
	keyBytes   []byte   // the ledger key in Apply's buffer: the batch script sends it from there (keyArg)
	ekeys      []string // the effect's keys and arguments (Effect.Args)
	eargs      []any

	done    bool
	outcome Outcome
	err     error             // final per-record error
	applier trace.SpanContext // the span a prior claim names (Result.Applier)
}

// send claims every write in one round trip, retrying those without an
// answer (sc holds the command's arguments, reused across batches).
func (l *Ledger) send(ctx context.Context, batch []Record, todo []*write, sc *applyScratch) error {
	var last error
	pending := todo // the first attempt sends every write
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			pending = make([]*write, 0, len(todo))
			for _, w := range todo {
				if !w.done {
					pending = append(pending, w)
				}
			}
		}
		if len(pending) == 0 {
			return nil
		}
		err := l.roundTrip(ctx, batch, pending, sc)
		if err == nil {
			continue // answers recorded; the loop ends above
		}
		last = err
		if !(transient(l.c, err) || isNoScriptErr(err)) || attempt >= l.cfg.retry.Attempts {
			break
		}
		// Debug: during an outage this fires every backoff step; the
		// pipeline logs the batch's retries at warn, rate limited.
		l.cfg.log.DebugContext(ctx, "sink: redis error, retrying", "attempt", attempt,
			"records", len(pending), "first", batch[pending[0].idx].at(), "err", err)
		if serr := sleep(ctx, l.cfg.retry.Delay(attempt)); serr != nil {
			last = errors.Join(serr, last)
			break
		}
	}
	r := &batch[todo[0].idx]
	return fmt.Errorf("%w: %d records from %s: %w", ErrUnknown, len(todo), r.at(), last)
}

// roundTrip sends the pending writes in one round trip (one run of the batch
// claim script, or a pipeline of per-key commands) and records each answer.
// It returns the first batch-level error (retryable or not); per-record
// final errors are stored in the write.
func (l *Ledger) roundTrip(ctx context.Context, batch []Record, pending []*write, sc *applyScratch) error {
	if l.scripted() {
		return l.roundTripScript(ctx, batch, pending, sc)
	}
	cmds, err := l.pipe(ctx, pending)
	const per = 2 // commands per write
	if len(cmds) != per*len(pending) {
		if err == nil {
			err = fmt.Errorf("%d replies to %d commands", len(cmds), per*len(pending))
		}
		return err
	}
	var batchErr error
	var scratch []byte
	for i, w := range pending {
		prior, claimed, cerr := answer(cmds[per*i+per-1])
		if cerr == nil {
			cerr = renewed(cmds[per*i])
		}
		if e := l.settle(batch, w, prior, claimed, cerr, &scratch); e != nil && batchErr == nil {
			batchErr = e
		}
	}
	return batchErr
}

// settle records w's answer: claimed, or the claim already there (prior),
// or the error cerr. A final reply that rejected w (e.g. WRONGTYPE: nothing
// was written for it) settles w with that error; any other error leaves w
// without an answer and is returned, for the caller to retry.
func (l *Ledger) settle(batch []Record, w *write, prior string, claimed bool, cerr error, scratch *[]byte) error {
	switch {
	case cerr == nil:
		w.done = true
		w.outcome = Suppressed
		if claimed {
			w.outcome = Applied
			return nil
		}
		switch classifyPrior(prior, &batch[w.idx], scratch) {
		case priorOwn:
			w.outcome = Applied
		case priorSameRecord:
			w.outcome = Redelivered
		case priorForeign:
			w.err = foreignValue(batch[w.idx].at(), w.key, prior)
		}
		if w.outcome != Applied && traced(&batch[w.idx]) {
			w.applier = priorSpan(prior)
		}
	case final(cerr) && !transient(l.c, cerr):
		w.done = true
		w.err = fmt.Errorf("sink: %s ledger key %s: %w", batch[w.idx].at(), QuoteKey(w.key), classify(cerr))
	default: // transient, or the context ended: unknown
		return cerr
	}
	return nil
}

// pipe queues every pending write and sends them in one round trip: record
// mode on Redis Cluster, where a batch's keys live in many slots (elsewhere
// the batch claim script claims the batch, scripted).
//
// Each write is two commands: PEXPIRE key ttl GT, then SET key claim NX GET
// PX ttl. The first renews a key that is already there (a suppressed
// record, or our own claim on a retry) to at least the TTL from now, and
// never shortens one; it runs first so that a key it finds cannot expire
// before the SET reads it. The scripts do the same inside Redis.
func (l *Ledger) pipe(ctx context.Context, pending []*write) ([]redis.Cmder, error) {
	p := l.c.Pipeline()
	for _, w := range pending {
		p.Do(ctx, "pexpire", w.key, l.ttlArg, "gt")
		p.SetArgs(ctx, w.key, w.claim, redis.SetArgs{Mode: "NX", TTL: l.cfg.ttl, Get: true})
	}
	return p.Exec(ctx)
}

// renewed reads the reply to PEXPIRE GT: 0 or 1 (no key, or a key that
// already lives longer, or one just renewed), or the error.
func renewed(c redis.Cmder) error {
	return c.Err()
}

// answer reads the reply to SET NX GET: claimed, or the claim already there.
func answer(c redis.Cmder) (prior string, claimed bool, err error) {
	switch c := c.(type) {
	case *redis.StatusCmd: // SET NX GET: nil reply = we set it
		prior, err = c.Result()
		if errors.Is(err, redis.Nil) {
			return "", true, nil
		}
		return prior, false, err
	}
	return "", false, fmt.Errorf("unexpected reply %T", c)
}

// foreignValue is the error for a ledger key that holds something this
// package did not write there: a misconfiguration (a prefix shared with
// another program, or a Ledger and a Guard sharing one), never a
// suppression. The record is not applied.
func foreignValue(at, key, val string) error {
	return fmt.Errorf("sink: %s ledger key %s holds %.80q, not a claim of this key space: %w: %w",
		at, QuoteKey(key), val, ErrMisconfigured, ErrBadClaim)
}

// classify wraps a final server reply with the sentinel the caller branches
// on: ErrBadValue when the record's own amount overflowed the sum,
// ErrMisconfigured when the server or its data is set up wrong. Any other
// final reply (OOM, say) is returned as it is: the caller retries it.
func classify(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "increment or decrement would overflow"):
		return fmt.Errorf("%w: %w", ErrBadValue, err)
	case redis.HasErrorPrefix(err, "MOVED"), redis.HasErrorPrefix(err, "ASK"):
		return fmt.Errorf("%w: %w", ErrMisconfigured, err)
	}
	// Inside a script the reply may carry a prefix ("ERR Error running
	// script ..."), so these are matched anywhere in the message.
	for _, s := range []string{"WRONGTYPE", "NOPERM", "CROSSSLOT", "not an integer", "syntax error",
		"unknown command", "wrong number of arguments"} {
		if strings.Contains(msg, s) {
			return fmt.Errorf("%w: %w", ErrMisconfigured, err)
		}
	}
	return err
}

// final reports whether err is a server reply that rejected this one
// command, so that it wrote nothing and retrying cannot help.
func final(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && !errors.Is(err, redis.Nil) && !retryable(err) && !isNoScriptErr(err)
}

func isNoScriptErr(err error) bool {
	return errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT")
}
