package sink

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Finish marks r's claim done when r's effect ran in this process under
// r's term and nothing has marked it since: an earlier Do ran the effect
// and returned an error wrapping ErrUnknown because its done write failed
// past the retries. An effect that ended with its context (its outcome
// unknown) is not finished: it may not have landed, so its pending claim is
// left to lapse and the next owner runs it again. It never runs an
// effect and never waits for another owner. It is for a consumer whose
// term ended (its partition lost or revoked, its process stopping) while
// such a record's outcome was unknown, and which will not apply it again:
// marked done, the record is redelivered or suppressed by the next owner
// instead of run again once its lease lapses.
//
// The done write goes over r's own claim or over nothing (the lease lapsed
// and nobody claimed since), never over another owner's claim: Finish is
// safe after the term ended and after the lease lapsed. It reports true
// when it wrote done, and false with a nil error when there was nothing to
// finish (the effect did not run here, a Do already marked it, or this
// Guard no longer remembers the record: see Guard). Otherwise the error
// wraps ErrLeaseLost when another owner holds the key (the effect may run
// again there: the window the idempotency key closes), ErrMisconfigured
// for a value that is not a guard claim, or ErrUnknown when Redis did not
// answer in time. It costs one round trip per record it marks (more while
// Redis fails) and none when there is nothing to finish.
//
// Redis errors are retried with the backoff until ctx is done, except that
// ctx's deadline does not end the retries before r's pending claim's lease
// would lapse (as far as this process knows: from when the claim or its
// last renewal was sent): until then no other owner can claim the key, so
// a done write that lands is sure to keep the effect from running again,
// even when the caller's own wait ran out (a process frozen past it, say).
// A ctx canceled before its deadline ends the retries at once.
func (g *Guard) Finish(ctx context.Context, r *Record) (bool, error) {
	m, err := g.mem.takeRan(r)
	if err != nil || m == nil {
		return false, err
	}
	defer g.mem.put(m)
	key, err := g.cfg.keys.Extract(r)
	if err != nil {
		return false, err // Do extracted it before: cannot happen
	}
	lk := g.cfg.prefix + key
	ctx, stop := untilLapse(ctx, m.leaseEnd)
	defer stop()
	for poll := 1; ; poll++ {
		cur, written, err := g.writeDone(ctx, r, key, lk, m)
		switch {
		case err == nil && written:
			m.forget = true
			return true, nil
		case err == nil:
			// Kept in memory: a later Do of r in this term waits for that
			// owner and reports its outcome instead of running the effect.
			c, derr := decodeGuardClaim(cur)
			if derr != nil {
				return false, foreignValue(r.at(), lk, cur)
			}
			return false, fmt.Errorf("%w at %s key %s: the effect ran here, and the key holds %s/%d@%d's %s claim now",
				ErrLeaseLost, r.at(), QuoteKey(key), c.Topic, c.Partition, c.Offset, c.State)
		case !errors.Is(err, ErrUnknown):
			return false, err
		}
		if serr := sleep(ctx, g.cfg.retry.Delay(poll)); serr != nil {
			return false, fmt.Errorf("%w (the effect ran; it is not marked done: %w)", err, serr)
		}
	}
}

// untilLapse returns ctx with its deadline, when earlier, moved out to
// leaseEnd; a cancel of ctx before its deadline still ends it at once.
func untilLapse(ctx context.Context, leaseEnd time.Time) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok || !leaseEnd.After(d) {
		return ctx, func() {}
	}
	lctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), leaseEnd)
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	return lctx, func() { stop(); cancel() }
}
