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
// the key is new (claim, done) and one when it is already done.
type Guard struct {
	c       redis.UniversalClient
	cfg     config
	claim   *redis.Script
	done    *redis.Script
	release *redis.Script
}

// NewGuard returns a Guard writing through c (single, Sentinel or Cluster:
// each script touches one key). It does no I/O.
func NewGuard(c redis.UniversalClient, opts ...Option) (*Guard, error) {
	if c == nil {
		return nil, errors.New("sink: NewGuard: nil client")
	}
	cfg, err := newConfig(true, opts)
	if err != nil {
		return nil, err
	}
	return &Guard{
		c:     c,
		cfg:   cfg,
		// KEYS[1] ledger key, ARGV[1] our pending claim, ARGV[2] lease ms,
		// ARGV[3] TTL ms. Returns 1 when claimed, else the claim there; a
		// done claim found is first renewed to at least the TTL from now
		// (PEXPIRE GT never shortens it), a pending one keeps its lease.
		claim: redis.NewScript(`local prior = redis.call('GET', KEYS[1])
if prior then
  if string.find(prior, '"state":"done"', 1, true) then redis.call('PEXPIRE', KEYS[1], ARGV[3], 'GT') end
  return prior
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`),
		// KEYS[1] ledger key, ARGV[1] our pending claim, ARGV[2] done claim,
		// ARGV[3] TTL ms, ARGV[4] our owner field. Done is written over our
		// own pending or done claim (a retry whose first reply was lost) or
		// over nothing (our lease lapsed and nobody claimed since); never
		// over another owner's claim.
		done: redis.NewScript(`local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] and not string.find(cur, ARGV[4], 1, true) then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`),
		// KEYS[1] ledger key, ARGV[1] our pending claim.
		release: redis.NewScript(`if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`),
	}, nil
}

// Do runs effect at most once per business key of r while the claim lives,
// and reports Applied when it ran it (or found r's own done claim, written
// under the same epoch) and Suppressed when the key was done before.
//
// It claims the key as pending for the lease; a live pending claim of
// another owner is waited for (polling with the backoff until it is done,
// then Suppressed, or gone, then claimed), bounded by ctx. The effect gets
// the business key and a context that ends with the lease. After it
// succeeds the claim becomes done for the TTL; if the claim was lost
// meanwhile, Do returns ErrLeaseLost (the effect ran, and another worker
// may run it too). If the effect fails, the claim is released and the
// error returned, so a retry runs it again.
//
// The remaining window: a crash after the effect and before done leaves a
// pending claim that expires, and a replay runs the effect again. Pass key
// to the external system as its idempotency key to close it.
//
// Redis errors are retried with the backoff; if done cannot be written,
// the error wraps ErrUnknown and the effect has run.
func (g *Guard) Do(ctx context.Context, r *Record, effect func(ctx context.Context, key string) error) (Outcome, error) {
	key, err := g.cfg.keys.Extract(r)
	if err != nil {
		return 0, err
	}
	lk := g.cfg.prefix + key
	mine := claimFor(r, ClaimPending, time.Now())
	mine.Owner = rand.Text()
	pending := mine.Encode()

	claimedAt, out, err := g.acquire(ctx, r, key, lk, pending)
	if out != 0 || err != nil {
		return out, err
	}
	deadline := claimedAt.Add(g.cfg.lease) // no later than the lease's real end
	if err := runHook(g.cfg.hooks.AfterClaim, ctx, key); err != nil {
		return 0, err
	}
	ectx, cancel := context.WithDeadline(ctx, deadline)
	err = effect(ectx, key)
	cancel()
	if err != nil {
		g.giveBack(ctx, r, key, lk, pending)
		return 0, fmt.Errorf("sink: %s key %q: effect: %w", r.at(), key, err)
	}
	if err := runHook(g.cfg.hooks.AfterEffect, ctx, key); err != nil {
		return 0, err
	}
	done := mine
	done.State, done.At = ClaimDone, time.Now().UTC()
	// Marking done is attempted even if ctx ended meanwhile: the effect ran.
	v, err := g.eval(context.WithoutCancel(ctx), r, key, g.done, lk, pending, done.Encode(), g.cfg.ttl.Milliseconds(),
		`"owner":"`+mine.Owner+`"`)
	if err != nil {
		if !errors.Is(err, ErrUnknown) {
			err = fmt.Errorf("%w: %w", ErrUnknown, err)
		}
		return 0, fmt.Errorf("%w (the effect ran; it is not marked done)", err)
	}
	if v != int64(1) {
		return 0, fmt.Errorf("%w at %s key %q: the effect ran", ErrLeaseLost, r.at(), key)
	}
	return Applied, nil
}

// Key returns the business key Do uses for r, from the Guard's key source;
// the error wraps ErrNoKey or ErrBadValue. It costs no round trip.
func (g *Guard) Key(r *Record) (string, error) { return g.cfg.keys.Extract(r) }

// acquire claims lk, waiting out a live foreign claim. It returns when
// the claim is ours (outcome 0, and a time no later than the claim was
// written) or with the outcome for a key already done.
func (g *Guard) acquire(ctx context.Context, r *Record, key, lk, pending string) (time.Time, Outcome, error) {
	for poll := 1; ; poll++ {
		start := time.Now()
		v, err := g.eval(ctx, r, key, g.claim, lk, pending, g.cfg.lease.Milliseconds(), g.cfg.ttl.Milliseconds())
		if err != nil {
			return start, 0, err
		}
		prior, ok := v.(string)
		if !ok || prior == pending {
			return start, 0, nil // claimed, now or by an earlier attempt whose reply was lost
		}
		c, err := decodeGuardClaim(prior)
		if err != nil {
			return start, 0, foreignValue(r.at(), lk, prior)
		}
		if c.State != ClaimPending {
			if c.Names(r) {
				return start, Applied, nil
			}
			return start, Suppressed, nil
		}
		if err := sleep(ctx, g.cfg.retry.delay(poll)); err != nil {
			return start, 0, fmt.Errorf("sink: %s key %q: waiting for %s/%d@%d's claim: %w",
				r.at(), key, c.Topic, c.Partition, c.Offset, err)
		}
	}
}

// giveBack deletes our pending claim after a failed effect. A failure is
// only logged: the lease expires anyway.
func (g *Guard) giveBack(ctx context.Context, r *Record, key, lk, pending string) {
	if _, err := g.eval(context.WithoutCancel(ctx), r, key, g.release, lk, pending); err != nil {
		g.cfg.log.WarnContext(ctx, "sink: release of a pending claim failed; it expires with its lease",
			"record", r.at(), "key", key, "err", err)
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
		if !retryable(err) || attempt >= g.cfg.retry.Attempts {
			break
		}
		g.cfg.log.DebugContext(ctx, "sink: redis error, retrying", "attempt", attempt, "record", r.at(), "err", err)
		if serr := sleep(ctx, g.cfg.retry.delay(attempt)); serr != nil {
			err = errors.Join(serr, err)
			break
		}
	}
	if retryable(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w at %s key %q: %w", ErrUnknown, r.at(), key, err)
	}
	return nil, fmt.Errorf("sink: %s key %q: %w", r.at(), key, err)
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
