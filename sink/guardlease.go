package sink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// leaseMargin is how long before its pending claim could lapse an effect's
// context ends: the time an effect has to stop once told, plus the skew
// between this process's clock and Redis's expiry (a round trip, a clock
// running at another rate). A fifth of the lease.
func (g *Guard) leaseMargin() time.Duration { return g.cfg.lease / 5 }

// runEffect runs effect under a context that ends with ctx, a leaseMargin
// before the lease taken at claimedAt could lapse, or at once when a renewal
// finds the claim no longer ours (cause ErrLeaseLost). While the effect runs,
// however long it overruns its context, the lease is renewed every third of
// the lease, so no other owner can claim the key before it returns unless
// Redis is unreachable for a whole lease. uncertain reports an error with
// which the effect may still have happened: one wrapping a context error, or
// any once its context ended, unless it wraps ErrNotApplied; an effect whose
// context ended before the call is not started (ErrNotApplied). m.leaseEnd moves to the end of the last
// renewal's lease.
func (g *Guard) runEffect(ctx context.Context, r *Record, key, lk string, m *memo, claimedAt time.Time,
	effect func(context.Context, string) error) (uncertain bool, err error) {
	lctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	ectx, cancel := context.WithDeadline(lctx, claimedAt.Add(g.cfg.lease-g.leaseMargin()))
	defer cancel()
	if ectx.Err() != nil {
		// Ended before the call (the term ended, or a process frozen past
		// the lease): the effect is not started, so it certainly did not
		// happen. Taking it as maybe happened would let Finish mark done an
		// effect that never ran.
		return false, fmt.Errorf("%w: its context ended before it started: %w", ErrNotApplied, context.Cause(ectx))
	}
	stop := make(chan struct{})
	stopOnce := sync.OnceFunc(func() { close(stop) })
	defer stopOnce() // also when the effect panics: no renewal outlives it
	var renewed atomic.Int64
	go g.keepLease(context.WithoutCancel(ctx), stop, r, lk, m.pending, lost, &renewed)
	err = effect(ectx, key)
	ended := ectx.Err() != nil
	stopOnce()
	if at := renewed.Load(); at != 0 {
		m.leaseEnd = time.Unix(0, at).Add(g.cfg.lease)
	}
	if err == nil || errors.Is(err, ErrNotApplied) {
		return false, err
	}
	return ended || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnknown), err
}

// keepLease renews the pending claim every third of the lease until stop
// closes, storing in renewed when (Unix ns) the last renewal that
// succeeded was sent. A claim found gone or another owner's cancels the
// effect's context with ErrLeaseLost; a failed renewal (Redis unreachable)
// is only logged.
func (g *Guard) keepLease(ctx context.Context, stop <-chan struct{}, r *Record, lk, pending string,
	cancel context.CancelCauseFunc, renewed *atomic.Int64) {
	every := max(g.cfg.lease/3, time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), every)
		sent := time.Now()
		v, err := g.renew.Run(rctx, g.c, []string{lk}, pending, g.cfg.lease.Milliseconds()).Int64()
		rcancel()
		switch {
		case err != nil:
			g.cfg.log.DebugContext(ctx, "sink: guard lease renewal failed", "record", r.at(), "err", err)
		case v != 1:
			cancel(fmt.Errorf("%w at %s: the pending claim is gone or another owner's while the effect runs", ErrLeaseLost, r.at()))
			return
		default:
			renewed.Store(sent.UnixNano())
		}
	}
}
