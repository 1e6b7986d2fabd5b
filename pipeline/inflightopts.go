package pipeline

import (
	"errors"
	"fmt"
)

// ErrEffectFailed wraps the error of a record whose effect returned an error
// and did not happen (Guarded: the effect's error, not an unknown outcome;
// its claim was released). With MaxInFlight the record is retried with a
// backoff, its key's later records waiting behind it, up to EffectAttempts;
// then it is dead-lettered, or the pipeline stops with a *RecordError whose
// Err is ErrEffectFailed (no DeadLetters, or StopOnEffectFailure).
var ErrEffectFailed = errors.New("pipeline: effect failed")

// MaxInFlight runs up to n records' effects of a partition at once
// (default 0: batches of MaxBatch, one after another). Records of the same
// record key (what the producer partitioned by: an order, a customer) run
// one after another in offset order; records without a record key are
// ordered by their business key (a Keyer's, as Guarded and sink.Ledger
// say it), or run alone. Records of different keys run at once, each in
// its own Apply call, the lowest offset first. Two records of one business
// key but different record keys may run at once: the ledger still lets one
// effect land (a guard claim makes the other wait and be suppressed). The commit point stays before the lowest offset
// whose effect has not landed, so a crash re-reads at most MaxUncommitted
// records of a partition, landed or not. A record whose effect fails waits
// for its retry without holding up other keys (see EffectAttempts); while
// it waits, the commit point cannot pass it, and once MaxUncommitted
// records of the partition lie past the last commit, the partition takes
// no more until it lands (PartitionStats.Retrying shows such records).
//
// It costs one goroutine per running effect and, in record mode, one Redis
// round trip per record instead of one per batch: use it where the effect's
// latency, not Redis, bounds the rate (an external call in guard mode).
// n must be 0 to 4096. MaxInFlightTotal caps the effects running at once in
// the whole pipeline.
func MaxInFlight(n int) Opt { return opt(func(c *config) { c.maxInFlight = n }) }

// MaxInFlightTotal caps the effects running at once across every
// partition of the pipeline, with MaxInFlight (default 1024; at least 1).
// A partition whose next record finds the cap reached waits for a slot.
func MaxInFlightTotal(n int) Opt { return opt(func(c *config) { c.maxInFlightTotal = n }) }

// EffectAttempts is how many times, with MaxInFlight, a record whose
// effect fails (ErrEffectFailed) is attempted before it is given up
// (default 5; at least 1): dead-lettered when DeadLetters are configured,
// else the pipeline stops on it. An effect error wrapping sink.ErrRejected
// is given up at once. Retries wait the backoff of failed batches (100ms
// doubling to 5s). Failures of unknown outcome (Redis unreachable, a
// timed-out call) are not counted: they are retried until the term ends,
// as batches are.
func EffectAttempts(n int) Opt { return opt(func(c *config) { c.effectAttempts = n }) }

// StopOnEffectFailure makes a record whose effect is given up (see
// EffectAttempts) stop the pipeline even when DeadLetters are configured:
// the partition's offset stays before it, and what landed before it is
// committed.
func StopOnEffectFailure() Opt { return opt(func(c *config) { c.stopOnEffectFailure = true }) }

// validateInFlight checks the in-flight options and sets their defaults.
func (c *config) validateInFlight() []error {
	var errs []error
	if c.maxInFlightTotal == 0 {
		c.maxInFlightTotal = 1024
	}
	if c.effectAttempts == 0 {
		c.effectAttempts = 5
	}
	if c.maxInFlight < 0 || c.maxInFlight > 4096 {
		errs = append(errs, fmt.Errorf("max in flight %d: want 0 to 4096", c.maxInFlight))
	}
	if c.maxInFlightTotal < 1 {
		errs = append(errs, fmt.Errorf("max in flight total %d: want at least 1", c.maxInFlightTotal))
	}
	if c.effectAttempts < 1 {
		errs = append(errs, fmt.Errorf("effect attempts %d: want at least 1", c.effectAttempts))
	}
	return errs
}
