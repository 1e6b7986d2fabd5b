package pipeline

import "errors"

var (
	// ErrPoison wraps a poison record (one the sink cannot decode: no usable
	// business key, a value the effect cannot read) that stopped the
	// pipeline after its attempts, when no DeadLetters are configured. The
	// partition's committed offset stays before it.
	ErrPoison = errors.New("pipeline: poison record")
	// ErrDeadLetter wraps a dead-letter write that no retry can land: the
	// record is larger than the dead-letter topic accepts, the broker refuses
	// it (invalid record, authorization), the topic stays unknown for a
	// DeadLetterLease, or Redis refuses or holds garbage at its marker.
	// It stops the pipeline naming the poison record's partition and offset;
	// what landed before it is committed, the record itself is not.
	ErrDeadLetter = errors.New("pipeline: dead letter cannot be written")

	// errFenced ends a worker whose term is over; it is not a pipeline failure.
	errFenced = errors.New("pipeline: worker fenced")
	// errStopped ends a worker asked to stop (revoke, shutdown) while its
	// batch's effects are unknown: it commits what landed before the batch
	// and leaves the rest to the next owner; not a pipeline failure.
	errStopped = errors.New("pipeline: stopped with a batch whose effects are unknown")
)
