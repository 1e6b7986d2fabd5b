package pipeline

import (
	"errors"
	"fmt"
)

var (
	// ErrPoison is the Err of a *RecordError for a poison record (one the
	// sink cannot decode: no usable business key, a value the effect cannot
	// read) that stopped the pipeline after its attempts, when no
	// DeadLetters are configured. The partition's committed offset stays
	// before it.
	ErrPoison = errors.New("pipeline: poison record")
	// ErrDeadLetter is the Err of a *RecordError for a poison record whose
	// dead-letter write no retry can land: even its placeholder is larger
	// than the dead-letter topic accepts, the broker refuses it (invalid record,
	// authorization), the topic stays unknown for a DeadLetterLease, or
	// Redis refuses or holds garbage at its marker. It stops the pipeline;
	// what landed before the record is committed, the record itself is not.
	ErrDeadLetter = errors.New("pipeline: dead letter cannot be written")

	// errFenced ends a worker whose term is over; it is not a pipeline failure.
	errFenced = errors.New("pipeline: worker fenced")
	// errStopped ends a worker asked to stop (revoke, shutdown) while its
	// batch's effects are unknown: it commits what landed before the batch
	// and leaves the rest to the next owner; not a pipeline failure.
	errStopped = errors.New("pipeline: stopped with a batch whose effects are unknown")
	// errLeft ends a batch whose retries the engine gave up at a stop
	// (engine.leave): the worker's exit says why (engine.exit: errStopped
	// naming the records).
	errLeft = errors.New("pipeline: batch left to the next owner")
)

// RecordError is the error of a run stopped on one record: its topic,
// partition and offset, the epoch of the term that held it, how many times
// the sink was asked to apply it, what stopped the run (Err) and why
// (Cause). errors.Is sees through it to both, so callers branch on ErrPoison
// and ErrDeadLetter as before, and errors.As gives them the record. The
// partition's committed offset stays before Offset; what landed before it
// is committed.
type RecordError struct {
	Topic     string // the record's topic
	Partition int32  // its partition
	Epoch     int64  // the group generation, member epoch or replay epoch of the term
	Offset    int64  // its offset: the partition's committed offset stays at or before it
	// Attempts counts the sink calls that carried the record: PoisonAttempts
	// for a poison record whose attempts were spent, 1 for a refusal no
	// retry can fix.
	Attempts int
	// Err is what stopped the run: ErrPoison (no dead letters configured),
	// ErrDeadLetter (the dead-letter write cannot land), or
	// sink.ErrMisconfigured (Redis refused the record's command, or its key
	// holds something that is not a claim).
	Err error
	// Cause is why: the sink's refusal of the record (wrapping sink.ErrNoKey,
	// ErrBadValue or ErrCrossSlot) under ErrPoison; the write's failure (the
	// refusal named in its text) under ErrDeadLetter; Redis's reply under
	// sink.ErrMisconfigured.
	Cause error
}

// Error names the record, its epoch and attempts, Err and Cause.
func (e *RecordError) Error() string {
	why := fmt.Sprintf("%v: %v", e.Err, e.Cause)
	if errors.Is(e.Cause, e.Err) { // the cause names the sentinel itself
		why = e.Cause.Error()
	}
	attempts := "attempts"
	if e.Attempts == 1 {
		attempts = "attempt"
	}
	return fmt.Sprintf("%s/%d epoch %d offset %d after %d %s: %s", e.Topic, e.Partition, e.Epoch, e.Offset,
		e.Attempts, attempts, why)
}

// Unwrap returns Err and Cause.
func (e *RecordError) Unwrap() []error { return []error{e.Err, e.Cause} }

// ErrEffectFailed wraps the error of a record whose effect returned an error
// and did not happen (Guarded: the effect's error, not an unknown outcome;
// its claim was released). The record is retried with a backoff, up to
// EffectAttempts in all (in batches and with MaxInFlight, where its key's
// later records wait behind it); then it is dead-lettered, or the pipeline
// stops with a *RecordError whose Err is ErrEffectFailed (no DeadLetters,
// or StopOnEffectFailure).
var ErrEffectFailed = errors.New("pipeline: effect failed")
