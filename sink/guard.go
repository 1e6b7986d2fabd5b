package sink

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Guard is the guard-mode sink for effects outside Redis: claim the key as
// pending with a lease, run the effect, mark the claim done with the TTL.
// A Guard is safe for concurrent use; each Do costs two round trips when
// the key is new (claim, done) and one when it is already done, plus one
// lease renewal per third of the lease that the effect runs.
//
// A Guard remembers each record (under its term: topic, partition, offset,
// group, epoch, member) whose Do has not finished: the owner token of its pending
// claim and whether its effect ran. So a retry of the record in the same
// term (the pipeline applying a batch again after ErrUnknown) recognises its
// own pending claim instead of waiting for it as another owner's, and a
// retry after the effect succeeded only marks the claim done: an effect that
// succeeded in this process is never run again for the same record and
// term (one whose outcome is unknown is, with the same key); and
// Finish can mark it done when no retry will come. The memory costs about
// 275 bytes per unfinished record, none once Do or Finish marks it done,
// and is bounded at 10,000 records: past that the oldest is
// forgotten (logged at Warn when its effect had run, since a retry of it
// could then run the effect again once its lease lapsed).
type Guard struct {
	c       redis.UniversalClient
	cfg     config
	claim   *redis.Script
	done    *redis.Script
	release *redis.Script
	renew   *redis.Script
	mem     *memory
}

// NewGuard returns a Guard writing through c (single, Sentinel or Cluster:
// each script touches one key). It does no I/O.
func NewGuard(c redis.UniversalClient, opts ...GuardOpt) (*Guard, error) {
	if c == nil {
		return nil, errors.New("sink: NewGuard: nil client")
	}
	cfg, err := newConfig(true, opts)
	if err != nil {
		return nil, err
	}
	g := &Guard{c: c, cfg: cfg, claim: guardClaimScript, done: guardDoneScript, release: guardReleaseScript,
		renew: guardRenewScript}
	g.mem = newMemory(defaultRemember, func(id string) {
		g.cfg.log.Warn("sink: guard forgot an unfinished record whose effect ran (memory bound reached); a retry of it could run the effect again once its lease lapsed",
			"record", id, "bound", g.mem.max)
	})
	return g, nil
}

// Do runs effect at most once per business key of r while the claim lives,
// and reports Applied when it ran it (or found r's own done claim, written
// under the same term), Redelivered when the key is done for r's topic,
// partition and offset under another term of r's group, and Suppressed when
// it is done for another record or group (see Outcome).
//
// It claims the key as pending for the lease; a live pending claim of
// another owner is waited for (polling with the backoff until it is done,
// then Suppressed or Redelivered, or gone, then claimed), bounded by ctx.
// The effect's context ends with ctx, a fifth of the lease before the
// claim's lease could lapse (the margin for the effect to stop and for the
// skew between this clock and Redis's), or at once when the claim is found
// gone. While the effect runs, however long it overruns its context, the
// lease is renewed every third of the lease: no other owner can claim the
// key before the effect returns unless Redis stays unreachable for a whole
// lease. Under a context of WithoutWaiting, another owner's live pending
// claim is not waited for: Do returns ErrClaimBusy at once.
//
// The effect's result decides what happens to the claim:
//   - nil: the effect happened. The claim becomes done for the TTL. If that
//     write fails past the retries, Do returns an error wrapping ErrUnknown
//     and a retry of r in the same term only marks the claim done. If the
//     claim was taken over meanwhile (its lease lapsed while Redis was
//     unreachable), Do returns ErrLeaseLost: the effect ran, and the other
//     owner may run it too; a retry then waits for that owner and reports
//     its outcome.
//   - an error wrapping context.Canceled, context.DeadlineExceeded or
//     ErrUnknown (the effect says it cannot tell), or any
//     error once the effect's context ended: the effect may or may not have
//     happened (the call went out, the answer did not come back). The claim
//     is kept pending, not released, so no other owner runs it meanwhile,
//     and Do returns the error wrapping ErrUnknown. A retry of r in the same
//     term runs the effect again with the same key; Finish leaves it (taking
//     it as done would lose an effect that did not land), so when no retry
//     comes the lease lapses and the next owner runs it. Either way the
//     external system sees the key again: its idempotency check absorbs it.
//   - an error wrapping ErrNotApplied, context or not: the effect says it
//     certainly did not happen (nothing reached the external system), and
//     the same holds when the effect's context ended before it was to be
//     called: then it is not called. As below.
//   - any other error: the effect did not happen. The claim is released
//     and the error returned; a retry runs the effect again.
//
// What remains is the window of a process that stops between the effect
// and done without marking it (a crash, a kill, a Finish that Redis did not
// answer in time, a memory bound reached): the pending claim lapses and the
// next owner runs the effect again. Pass key to the external system as its
// idempotency key to close it.
//
// Redis errors are retried with the backoff.
func (g *Guard) Do(ctx context.Context, r *Record, effect func(ctx context.Context, key string) error) (Outcome, error) {
	key, err := g.cfg.keys.Extract(r)
	if err != nil {
		return 0, err
	}
	lk := g.cfg.prefix + key
	m, err := g.mem.take(r, func() memo {
		c := claimFor(r, ClaimPending, time.Now())
		c.Owner = rand.Text()
		return memo{owner: c.Owner, pending: c.Encode()}
	})
	if err != nil {
		return 0, err
	}
	defer g.mem.put(m)
	if m.ran { // a retry: the effect succeeded in this process, only done is missing
		return g.finish(ctx, r, key, lk, m, true)
	}
	claimedAt, out, err := g.acquire(ctx, r, key, lk, m.pending)
	if errors.Is(err, ErrClaimBusy) {
		m.forget = true // nothing of ours was written
	}
	if err != nil {
		return 0, err // our claim may be written: the memo keeps its token for a retry
	}
	if out != 0 {
		m.forget = true
		return out, nil
	}
	if err := faultPoint(ctx, key, afterClaim); err != nil {
		m.forget = true // as a crash forgets
		return 0, err
	}
	m.leaseEnd = claimedAt.Add(g.cfg.lease)
	uncertain, err := g.runEffect(ctx, r, key, lk, m, claimedAt, effect)
	switch {
	case err != nil && !uncertain:
		m.forget = true
		g.giveBack(ctx, r, key, lk, m.pending)
		return 0, fmt.Errorf("sink: %s key %s: effect: %w", r.at(), QuoteKey(key), err)
	case err != nil:
		// Not m.ran: whether it landed is unknown, so a retry runs it again
		// (with the same key) and Finish leaves it to the next owner.
		return 0, fmt.Errorf("%w at %s key %s: effect ended with its context, so it may or may not have happened: its claim stays pending and a retry calls it again with the same key: %w",
			ErrUnknown, r.at(), QuoteKey(key), err)
	}
	m.ran = true
	if err := faultPoint(ctx, key, afterEffect); err != nil {
		m.forget = true // as a crash forgets
		return 0, err
	}
	return g.finish(ctx, r, key, lk, m, false)
}

// finish marks m's claim done, the effect having run. retry says whether
// this is a later Do of the record: then a claim another owner holds is
// waited for and its outcome reported (the lease was lost earlier, and
// ErrLeaseLost returned then), instead of ErrLeaseLost again.
func (g *Guard) finish(ctx context.Context, r *Record, key, lk string, m *memo, retry bool) (Outcome, error) {
	for poll := 1; ; poll++ {
		// Marking done is attempted even if ctx ended meanwhile: the effect ran.
		cur, written, err := g.writeDone(context.WithoutCancel(ctx), r, key, lk, m)
		if err != nil {
			if !errors.Is(err, ErrUnknown) {
				err = fmt.Errorf("%w: %w", ErrUnknown, err)
			}
			return 0, fmt.Errorf("%w (the effect ran; it is not marked done: a retry in this term marks it done without running it)", err)
		}
		if written {
			m.forget = true
			return Applied, nil
		}
		if !retry {
			return 0, fmt.Errorf("%w at %s key %s: the effect ran", ErrLeaseLost, r.at(), QuoteKey(key))
		}
		c, err := decodeGuardClaim(cur)
		if err != nil {
			return 0, foreignValue(r.at(), lk, cur)
		}
		if c.State == ClaimDone {
			m.forget = true
			g.cfg.log.WarnContext(ctx, "sink: the guard lease was lost after the effect ran; another owner ran it too",
				"record", r.at(), "key", QuoteKey(key), "other", fmt.Sprintf("%s/%d@%d", c.Topic, c.Partition, c.Offset))
			return doneOutcome(c, r), nil
		}
		if err := sleep(ctx, g.cfg.retry.Delay(poll)); err != nil {
			return 0, fmt.Errorf("sink: %s key %s: the effect ran; waiting for %s/%d@%d's claim to mark it done: %w",
				r.at(), QuoteKey(key), c.Topic, c.Partition, c.Offset, err)
		}
	}
}

// writeDone writes m's claim done, the effect having run: over our own
// pending or done claim, or over nothing (the lease lapsed and nobody
// claimed since), never over another owner's claim, which it returns
// instead (written false).
func (g *Guard) writeDone(ctx context.Context, r *Record, key, lk string, m *memo) (cur string, written bool, err error) {
	done, err := DecodeClaim(m.pending)
	if err != nil {
		return "", false, fmt.Errorf("sink: %s key %s: own pending claim: %w", r.at(), QuoteKey(key), err)
	}
	done.State, done.At = ClaimDone, time.Now().UTC()
	v, err := g.eval(ctx, r, key, g.done, lk, m.pending, done.Encode(), g.cfg.ttl.Milliseconds(), `"owner":"`+m.owner+`"`)
	if err != nil {
		return "", false, err
	}
	cur, taken := v.(string)
	return cur, !taken, nil
}

// doneOutcome is what a done claim c means for r: Applied when it is r's own
// (same term), Redelivered when it is r's under another term of its group,
// else Suppressed.
func doneOutcome(c Claim, r *Record) Outcome {
	switch {
	case c.Names(r):
		return Applied
	case c.SameRecord(r):
		return Redelivered
	}
	return Suppressed
}

// Key returns the business key Do uses for r, from the Guard's key source;
// the error wraps ErrNoKey or ErrBadValue. It costs no round trip.
func (g *Guard) Key(r *Record) (string, error) { return g.cfg.keys.Extract(r) }

// acquire claims lk, waiting out a live foreign claim. It returns when
// the claim is ours (outcome 0, and a time no later than its lease began)
// or with the outcome for a key already done.
func (g *Guard) acquire(ctx context.Context, r *Record, key, lk, pending string) (time.Time, Outcome, error) {
	for poll := 1; ; poll++ {
		start := time.Now()
		v, err := g.eval(ctx, r, key, g.claim, lk, pending, g.cfg.lease.Milliseconds(), g.cfg.ttl.Milliseconds())
		if err != nil {
			return start, 0, err
		}
		prior, ok := v.(string)
		if !ok {
			return start, 0, nil // claimed now, or our own claim found and its lease started again
		}
		c, err := decodeGuardClaim(prior)
		if err != nil {
			return start, 0, foreignValue(r.at(), lk, prior)
		}
		if c.State != ClaimPending {
			return start, doneOutcome(c, r), nil
		}
		if ctx.Value(noWaitKey{}) != nil {
			return start, 0, fmt.Errorf("%w: %s key %s: %s/%d@%d holds it pending", ErrClaimBusy,
				r.at(), QuoteKey(key), c.Topic, c.Partition, c.Offset)
		}
		if err := sleep(ctx, g.cfg.retry.Delay(poll)); err != nil {
			return start, 0, fmt.Errorf("sink: %s key %s: waiting for %s/%d@%d's claim: %w",
				r.at(), QuoteKey(key), c.Topic, c.Partition, c.Offset, err)
		}
	}
}

// giveBack deletes our pending claim after an effect that failed without
// happening. A failure is only logged: the lease expires anyway.
func (g *Guard) giveBack(ctx context.Context, r *Record, key, lk, pending string) {
	if _, err := g.eval(context.WithoutCancel(ctx), r, key, g.release, lk, pending); err != nil {
		g.cfg.log.WarnContext(ctx, "sink: release of a pending claim failed; it expires with its lease",
			"record", r.at(), "key", QuoteKey(key), "err", err)
	}
}

// eval runs one single-key script, retrying transient errors.
func (g *Guard) eval(ctx context.Context, r *Record, key string, s *redis.Script, lk string, args ...any) (any, error) {
	var err error
	for attempt := 1; ; attempt++ {
		var v any
		v, err = s.Run(ctx, g.c, []string{lk}, args...).Result()
		if err == nil {
			return v, nil
		}
		if !transient(g.c, err) || attempt >= g.cfg.retry.Attempts {
			break
		}
		g.cfg.log.DebugContext(ctx, "sink: redis error, retrying", "attempt", attempt, "record", r.at(), "err", err)
		if serr := sleep(ctx, g.cfg.retry.Delay(attempt)); serr != nil {
			err = errors.Join(serr, err)
			break
		}
	}
	if transient(g.c, err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w at %s key %s: %w", ErrUnknown, r.at(), QuoteKey(key), err)
	}
	if final(err) {
		err = classify(err)
	}
	return nil, fmt.Errorf("sink: %s key %s: %w", r.at(), QuoteKey(key), err)
}

// Lookup returns the claim stored for business key, if any (one GET, not
// retried).
func (g *Guard) Lookup(ctx context.Context, key string) (Claim, bool, error) {
	return lookup(ctx, g.c, g.cfg.prefix+key)
}

// decodeGuardClaim decodes a claim a Guard wrote: pending or done, with an
// owner. Anything else wraps ErrBadClaim.
func decodeGuardClaim(s string) (Claim, error) {
	c, err := DecodeClaim(s)
	if err != nil {
		return Claim{}, err
	}
	if (c.State != ClaimPending && c.State != ClaimDone) || c.Owner == "" {
		return Claim{}, fmt.Errorf("%w: a %q claim without a guard's owner", ErrBadClaim, c.State)
	}
	return c, nil
}

// WithoutWaiting returns ctx under which Guard.Do, finding the key's claim
// pending under another owner, returns ErrClaimBusy at once instead of
// waiting for it (pipeline.GuardedBatch: a record that holds claims must
// not wait for another's, which may be waiting for one of them).
func WithoutWaiting(ctx context.Context) context.Context {
	return context.WithValue(ctx, noWaitKey{}, true)
}

type noWaitKey struct{}
