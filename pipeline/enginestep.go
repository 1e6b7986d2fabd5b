package pipeline

import (
	"fmt"
	"time"
)

// stop modes, strongest last.
const (
	running   int32 = iota
	finishing       // finish the queue, retrying through failures as running does, commit, exit (a replay's range end)
	draining        // finish the queue, commit, exit; a batch failing now is given up (Close)
	revoking        // finish the in-flight batch, commit, exit (revoke)
)

// givingUp reports whether mode is a stop that gives up a failing batch or
// commit (draining, revoking) rather than retrying it: finishing is not one,
// a replay that reached its range's end still owes its last batch.
func givingUp(mode int32) bool { return mode >= draining }

// loopState is what a worker's loop knows at a decision that the engine
// does not hold: its stop mode, whether the term was fenced, the records
// queued, and with MaxInFlight the scheduler's counts. The driver reads it
// before each step; next decides from it and the engine's own state (how
// the term ends: termEnd).
type loopState struct {
	mode    int32
	fenced  bool
	queued  int // records in the partition's queue
	held    int // MaxInFlight: records the scheduler holds (running, waiting or ready)
	running int // MaxInFlight: effects running
	waiting int // MaxInFlight: records waiting for a retry
}

// step is the engine's decision for one turn of a worker's loop: what to
// do first (freeze, giveUp, take, start), then how the turn ends (then).
type step struct {
	freeze bool // MaxInFlight: admit and start nothing more (a revoke or a fence): the driver calls engine.freeze
	giveUp bool // MaxInFlight: leave the records waiting for a retry (a stop that gives up)
	take   int  // records to take from the queue: a batch to apply, or records to admit
	start  bool // MaxInFlight: start what the scheduler lets run
	then   stepThen
	at     time.Time // thenBound: when the commit is due
}

// stepThen is how a turn of the loop ends.
type stepThen int

const (
	thenWait   stepThen = iota // wait for records, a stop, an effect's report or a timer
	thenLoop                   // decide again
	thenCommit                 // commit at the commit point now
	thenBound                  // batches at the policy's Max: commit at step.at, waiting for it or a stop
	thenFinish                 // a replay's range is read: settle what is held, commit its end, exit
	thenExit                   // end the loop; the final commit follows
	thenCrash                  // MaxInFlight: the crash point, nothing running: end as a crash
	thenFatal                  // MaxInFlight: nothing running: end with the failure (termEnd.fatal)
)

var stepThenNames = [...]string{"wait", "loop", "commit", "bound", "finish", "exit", "crash", "fatal"}

func (t stepThen) String() string {
	if t < 0 || int(t) >= len(stepThenNames) {
		return fmt.Sprintf("stepThen(%d)", int(t))
	}
	return stepThenNames[t]
}

// next decides the loop's next step in state s at now, for either
// schedule. It touches nothing: the driver carries the step out and tells
// the engine the outcomes.
func (e *engine) next(s loopState, now time.Time) step {
	if !e.inFlight {
		return e.nextBatch(s, now)
	}
	end := &e.end
	switch {
	case !end.frozen && (s.mode == revoking || s.fenced):
		return step{freeze: true, then: thenLoop}
	case givingUp(s.mode) && s.waiting > 0:
		// Asked to stop while effects wait for a retry: none comes in
		// this term (as a failed batch is not retried at a stop). A
		// replay finishing its range retries them, as running does.
		return step{giveUp: true, then: thenLoop}
	}
	if !end.frozen && s.queued > 0 {
		if n := min(e.admitRoom(e.queueRecords, s.held), s.queued); n > 0 {
			return step{take: n, then: thenLoop}
		}
	}
	st := step{start: !end.frozen && s.held > 0}
	// Every end below but a due commit needs nothing running and, unless
	// frozen, nothing held: so starting first never changes them.
	switch {
	case s.running == 0 && end.crash:
		st.then = thenCrash
	case s.running == 0 && end.fatal != nil:
		st.then = thenFatal
	case s.running == 0 && end.frozen:
		st.then = thenExit
	case s.running == 0 && s.held == 0 && s.queued == 0 && s.mode == draining:
		st.then = thenExit
	case s.running == 0 && s.held == 0 && s.queued == 0 && s.mode == finishing:
		st.then = thenFinish
	case e.dueAt(now):
		st.then = thenCommit
	default:
		st.then = thenWait
	}
	return st
}

// nextBatch is next for batches: a batch is taken as soon as the policy
// leaves room; at the policy's Max the loop commits (or waits for a failed
// commit's retry); an empty queue waits, or ends a stop.
func (e *engine) nextBatch(s loopState, now time.Time) step {
	if s.mode == revoking || s.fenced {
		return step{then: thenExit}
	}
	n := e.room(e.maxBatch)
	if n == 0 {
		// As many records landed past the last commit as the policy
		// allows: nothing more lands before a commit.
		at, _ := e.due()
		switch {
		case !at.After(now):
			return step{then: thenCommit}
		case givingUp(s.mode):
			return step{then: thenExit} // stopping while commits fail: the final commit tries once more
		}
		return step{then: thenBound, at: at}
	}
	if s.queued > 0 {
		return step{take: min(n, s.queued), then: thenLoop}
	}
	switch {
	case s.mode == draining:
		return step{then: thenExit}
	case s.mode == finishing:
		return step{then: thenFinish}
	case e.dueAt(now):
		return step{then: thenCommit}
	}
	return step{then: thenWait}
}
