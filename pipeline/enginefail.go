package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// failure is what a failed attempt of a record says about it, as the
// engine judges it: the same in both schedules.
type failure int

const (
	// failUnknown: the outcome is unknown (Redis unreachable, a call cut
	// short, the effect's system down): applied again while the term
	// lasts, the claims absorbing whatever landed.
	failUnknown failure = iota
	// failPoison: the record's own fault (no business key, a value the
	// sink cannot decode): applied again PoisonAttempts times in all,
	// then it failed for good.
	failPoison
	// failEffect: its effect failed and did not happen (ErrEffectFailed):
	// applied again EffectAttempts times in all, then it failed for good.
	failEffect
	// failRefused: the effect refused it (sink.ErrRejected): it failed
	// for good at once.
	failRefused
	// failMisconfigured: no retry can fix it and skipping it would lose
	// it (sink.ErrMisconfigured): the partition stops on it.
	failMisconfigured
)

var failureNames = [...]string{"unknown", "poison", "effect", "refused", "misconfigured"}

func (f failure) String() string {
	if f < 0 || int(f) >= len(failureNames) {
		return fmt.Sprintf("failure(%d)", int(f))
	}
	return failureNames[f]
}

// classify is the failure err says of a record's attempt: err is the
// record's own result (sink.Result.Err) or, for a call of that record
// alone, the call's error. A batch's call error says nothing of any one
// record: the batch schedule takes it as failUnknown unless it is
// sink.ErrMisconfigured.
func classify(err error) failure {
	switch {
	case errors.Is(err, sink.ErrMisconfigured):
		return failMisconfigured
	case badRecord(err):
		return failPoison
	case refusedEffect(err), errors.As(err, new(*givenUp)):
		return failRefused
	case errors.Is(err, ErrEffectFailed):
		return failEffect
	}
	return failUnknown
}

// retryAct is what the engine makes of a failed attempt.
type retryAct int

const (
	actRetry   retryAct = iota // apply it again after the wait
	actForGood                 // it failed for good: the storm path (failedForGood), or the partition stops on it without dead letters
	actLeave                   // no retry in this term: leave it to the next owner, its outcome unknown (errStopped)
	actStop                    // the partition stops on it, uncommitted
)

var retryActNames = [...]string{"retry", "for good", "leave", "stop"}

func (a retryAct) String() string {
	if a < 0 || int(a) >= len(retryActNames) {
		return fmt.Sprintf("retryAct(%d)", int(a))
	}
	return retryActNames[a]
}

// retryLimits are the bounds onFailure judges by: the backoff of records
// whose outcome is unknown or whose effect failed (retry), that of poison
// records and their attempts (poison), and the attempts of a failing
// effect.
type retryLimits struct {
	retry, poison  sink.Backoff
	effectAttempts int
}

// onFailure judges a failed attempt of a record, which failed as kind:
// attempts counts the record's failed attempts in this term, this one
// included, and own those that failed as kind (a failure of unknown
// outcome, or an effect whose system is down, does not count against a
// failing effect's EffectAttempts). stopping says that the term gives no
// more retries (a stop that gives up, a revoke, a fence, a frozen
// partition). It returns what to do and, for actRetry, how long to wait
// first: the backoff grows with attempts. Both schedules ask it: batches
// for each record of a call that failed, MaxInFlight for each record.
//
// A poison record asked about while stopping fails for good at once (no
// attempt is left in this term); an unknown outcome, or an effect with
// attempts left, is left to the next owner.
func (e *engine) onFailure(kind failure, attempts, own int, stopping bool) (retryAct, time.Duration) {
	switch kind {
	case failMisconfigured:
		return actStop, 0
	case failRefused:
		return actForGood, 0
	case failPoison:
		if stopping || own >= e.limits.poison.Attempts {
			return actForGood, 0
		}
		return actRetry, e.limits.poison.Ceiling(attempts)
	case failEffect:
		if own >= e.limits.effectAttempts {
			return actForGood, 0
		}
	}
	if stopping {
		return actLeave, 0
	}
	return actRetry, e.limits.retry.Ceiling(attempts)
}

// failCounts are one record's failed attempts in a term, by kind.
type failCounts [failMisconfigured + 1]int

// note counts a failed attempt of kind and returns the record's failed
// attempts in all and those of kind, this one included (onFailure's
// attempts and own).
func (c *failCounts) note(kind failure) (attempts, own int) {
	c[kind]++
	return c.total(), c[kind]
}

// total is the record's failed attempts in all.
func (c *failCounts) total() int {
	n := 0
	for _, k := range c {
		n += k
	}
	return n
}

// givenUp is a record's result error once the engine judged it failed for
// good (actForGood) in a batch: the record's own failure from then on,
// which a retry of the batch skips.
type givenUp struct {
	attempts int
	err      error
}

func (g *givenUp) Error() string { return g.err.Error() }
func (g *givenUp) Unwrap() error { return g.err }
