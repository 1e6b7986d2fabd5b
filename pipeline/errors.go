package pipeline

import "errors"

var (
	// ErrInjectedCrash is the error of a worker killed by the CrashAfter
	// fault hook, between its effects and its commit.
	ErrInjectedCrash = errors.New("pipeline: injected crash")
	// ErrBadRecord wraps a record the sink refused (no usable business key,
	// a value the effect cannot read) under the Stop policy.
	ErrBadRecord = errors.New("pipeline: bad record")

	// errFenced ends a worker whose term is over; it is not a pipeline failure.
	errFenced = errors.New("pipeline: worker fenced")
)
