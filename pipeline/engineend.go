package pipeline

import (
	"errors"
	"fmt"
	"sort"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// termEnd is how a term's loop ends, in both schedules: the engine keeps
// it, next decides from it, and the worker reads it at its exit (exit).
type termEnd struct {
	// frozen: nothing more is taken or started (a revoke, a fence, a
	// failure with no retry to come); the loop ends once nothing runs.
	frozen bool
	fatal  error // what stops the pipeline, if anything
	// left are the records whose effect may have run and that get no
	// retry in this term: finished at the worker's exit (Finisher) and
	// read again by the partition's next owner.
	left   []sink.Record
	leftBy error // the failure of the first of them
	crash  bool  // the CrashAfter point is reached: crash once nothing runs
}

// freeze takes and starts nothing more in this term.
func (e *engine) freeze() { e.end.frozen = true }

// stopOn freezes the partition on err, which stops the pipeline once
// nothing runs (the final commit covers what landed before); the first
// such error is kept, and a fence is no failure.
func (e *engine) stopOn(err error) {
	e.end.frozen = true
	if e.end.fatal == nil && !errors.Is(err, errFenced) {
		e.end.fatal = err
	}
}

// leave keeps rs, whose effects may have run and which get no retry in
// this term (cause: why), for the worker's exit, and freezes the
// partition.
func (e *engine) leave(cause error, rs ...sink.Record) {
	e.end.frozen = true
	e.end.left = append(e.end.left, rs...)
	if e.end.leftBy == nil {
		e.end.leftBy = cause
	}
}

// crashAt notes that the CrashAfter point is reached.
func (e *engine) crashAt() { e.end.crash, e.end.frozen = true, true }

// exit is what the term's loop ends with: err, the loop's own error, or
// else the failure that stopped the partition, or else, when records were
// left and the term was not fenced, errStopped naming their offsets. It
// also returns the records left, by offset, for the worker to finish.
func (e *engine) exit(part checkpoint.Partition, epoch int64, err error, fenced bool) ([]sink.Record, error) {
	left := e.end.left
	sort.Slice(left, func(i, j int) bool { return left[i].Offset < left[j].Offset })
	if err == nil {
		err = e.end.fatal
	}
	if err == nil && len(left) > 0 && !fenced {
		err = fmt.Errorf("%s epoch %d offsets %d..%d: %w: %w", part, epoch, left[0].Offset, left[len(left)-1].Offset,
			errStopped, e.end.leftBy)
	}
	return left, err
}
