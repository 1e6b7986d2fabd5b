package pipeline

import "time"

// stormVerdict is the engine's decision on a record that failed for good.
type stormVerdict int

const (
	stormHold       stormVerdict = iota // held, unlanded, until a later record of the partition succeeds
	stormDeadLetter                     // dead-lettered now (then deadLettered)
	stormStop                           // the pipeline stops before it: ErrPoisonStorm
)

// failed decides for h, which failed for good; join adds it to the
// pipeline's sum of runs (runner.failing) and returns the new sum. A
// record that a success of its partition at a later offset already
// followed is a poison record between good ones: dead-lettered now, in no
// run. Otherwise it joins its partition's run of failures, held, unlanded,
// until a later record of the partition succeeds (succeed releases it):
// the record that makes the sum exceed DeadLetterMaxRun stops the pipeline
// instead (the *PoisonStormError says how), nothing of the run
// dead-lettered. With no bound (holding would keep the whole topic in
// memory) every failure is dead-lettered now.
func (e *engine) failed(h heldRecord, join func() int, now time.Time) (stormVerdict, *PoisonStormError) {
	g := &e.storms
	if e.storm.maxRun == 0 || h.r.Offset < g.best {
		return stormDeadLetter, nil
	}
	g.hold(h)
	g.lastHold = now
	run := join()
	if run > e.storm.maxRun {
		g.stormed = true // no later success of this term releases what is held
		return stormStop, &PoisonStormError{Run: run, MaxRun: e.storm.maxRun, InWindow: g.count,
			Window: e.storm.window, MaxShare: e.storm.maxShare, First: g.held[0].r.Offset, NoSuccess: !g.succeeded,
			DeadLettered: g.aside, Cause: h.cause}
	}
	return stormHold, nil
}

// idleAt says when the records held are dead-lettered though no success
// followed them (idle): once the partition, which has seen a success in
// the term, has held no new failure and seen no success for the idle
// time, the commit interval. A partition whose newest record failed so
// gets it dead-lettered and committed past while nothing follows it; a
// storm keeps failing records, each restarting the wait, and is held.
// false when nothing waits so.
func (e *engine) idleAt() (time.Time, bool) {
	g := &e.storms
	if len(g.held) == 0 || !g.succeeded || g.stormed {
		return time.Time{}, false
	}
	return g.lastHold.Add(e.storm.idle), true
}

// idle returns the held records to dead-letter at now (idleAt passed),
// nil before. They stay in the partition's run, and in the pipeline's
// sum, until a later record succeeds: a storm that trickles in, one
// record at a time, still stops at the bound.
func (e *engine) idle(now time.Time) []heldRecord {
	if at, ok := e.idleAt(); !ok || now.Before(at) {
		return nil
	}
	h := e.storms.take()
	e.storms.aside += len(h)
	return h
}

// succeed notes that the record of the partition at off succeeded and
// returns the held records it follows (those below off), in offset order,
// to dead-letter (each through deadLetterAllowed, then deadLettered; hold
// again those that could not be), and how many records leave the
// partition's run (those and the ones dead-lettered idle): the caller
// takes them from the pipeline's sum. Once they are written the success
// counts in the window (released). Held records past off (landing out of
// order, MaxInFlight) stay held. A term stopping on a storm releases
// nothing (ok false).
func (e *engine) succeed(off int64) (release []heldRecord, left int, ok bool) {
	g := &e.storms
	if g.stormed {
		return nil, 0, false
	}
	g.succeeded = true
	g.best = max(g.best, off)
	release = g.takeBelow(off)
	left, g.aside = len(release)+g.aside, 0
	return release, left, true
}

// released counts the success in the partition's window, after the
// records succeed released were dead-lettered.
func (e *engine) released() { e.storms.see(false) }

// deadLetterAllowed counts a dead letter of h in the partition's window
// and says whether it may be written: not when it makes the window's share
// of dead letters exceed DeadLetterMaxShare (the *PoisonStormError).
func (e *engine) deadLetterAllowed(h heldRecord) *PoisonStormError {
	g := &e.storms
	if g.ring == nil && e.storm.maxShare > 0 {
		g.ring = make([]bool, e.storm.window)
	}
	g.see(true)
	if e.storm.maxShare > 0 && float64(g.count) > e.storm.maxShare*float64(e.storm.window) {
		return &PoisonStormError{Run: len(g.held), MaxRun: e.storm.maxRun, InWindow: g.count, Window: e.storm.window,
			MaxShare: e.storm.maxShare, First: h.r.Offset, Cause: h.cause}
	}
	return nil
}

// atEnd settles a replay's partition that read its range to the end
// holding records. When none of its records succeeded in the term the
// configuration satisfied none: the *PoisonStormError, and the first
// record held. Otherwise the held records are the range's last, failed
// after good ones within the bound: release, to dead-letter as succeed's.
// All nil when it holds none.
func (e *engine) atEnd() (storm *PoisonStormError, first *heldRecord, release []heldRecord) {
	g := &e.storms
	if len(g.held) == 0 {
		return nil, nil, nil
	}
	if g.succeeded && !g.stormed {
		return nil, nil, g.take() // release: they and those aside leave the run (endRun)
	}
	h := &g.held[0]
	return &PoisonStormError{Run: len(g.held), MaxRun: e.storm.maxRun, First: h.r.Offset,
		NoSuccess: true, AtEnd: true, Cause: h.cause}, h, nil
}

// endRun ends the term's run of failures: it returns the run, for the
// caller to take from the pipeline's sum, and the records held, unlanded,
// which the partition's next owner reads again.
func (e *engine) endRun() (run int, held []heldRecord) {
	held = e.storms.take()
	run, e.storms.aside = len(held)+e.storms.aside, 0
	return run, held
}
