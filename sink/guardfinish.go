package sink

import (
	"context"
	"errors"
	"fmt"
)

// Finish marks r's claim done when r's effect ran in this process under
// r's term and nothing has marked it since: an earlier Do ran the effect
// and returned an error wrapping ErrUnknown (its done write failed past
// the retries, or the effect ended with its context). It never runs an
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
// answer before ctx ended; Redis errors are retried with the backoff until
// then. It costs one round trip per record it marks (more while Redis
// fails) and none when there is nothing to finish.
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
			return false, fmt.Errorf("%w at %s key %q: the effect ran here, and the key holds %s/%d@%d's %s claim now",
				ErrLeaseLost, r.at(), key, c.Topic, c.Partition, c.Offset, c.State)
		case !errors.Is(err, ErrUnknown):
			return false, err
		}
		if serr := sleep(ctx, g.cfg.retry.delay(poll)); serr != nil {
			return false, fmt.Errorf("%w (the effect ran; it is not marked done: %w)", err, serr)
		}
	}
}
