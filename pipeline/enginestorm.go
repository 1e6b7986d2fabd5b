package pipeline

// stormVerdict is the engine's decision on a record that failed for good.
type stormVerdict int

const (
	stormHold       stormVerdict = iota // held, unlanded, until a record of the partition succeeds
	stormDeadLetter                     // dead-lettered now (then deadLettered)
	stormStop                           // the pipeline stops before it: ErrPoisonStorm
)

// failed decides for h, which failed for good, with run records failed
// for good and no success of their partitions since over the pipeline,
// h included (runner.failing): the record that makes run exceed
// DeadLetterMaxRun stops the pipeline (the *PoisonStormError says how);
// until the partition has seen a success in this term the record is held;
// after one, or with no bound (holding would keep the whole topic in
// memory), it is dead-lettered now.
func (e *engine) failed(h heldRecord, run int) (stormVerdict, *PoisonStormError) {
	g := &e.storms
	if g.run == 0 {
		g.first = h.r.Offset
	}
	g.run++
	if e.storm.maxRun > 0 && run > e.storm.maxRun {
		g.stormed = true // no later success of this term releases what is held
		first := g.first
		if len(g.held) > 0 {
			first = min(first, g.held[0].r.Offset)
		}
		return stormStop, &PoisonStormError{Run: run, MaxRun: e.storm.maxRun, InWindow: g.count,
			Window: e.storm.window, MaxShare: e.storm.maxShare, First: first, NoSuccess: !g.succeeded, Cause: h.cause}
	}
	if g.succeeded || e.storm.maxRun == 0 {
		return stormDeadLetter, nil
	}
	g.hold(h)
	return stormHold, nil
}

// succeed notes that a record of the partition succeeded and returns the
// records held before it, in offset order, to dead-letter (each through
// deadLetterAllowed, then deadLettered; hold again those that could not
// be), and the partition's run of failures, which ends: the caller takes
// it from the pipeline's sum. Once they are written the success counts in
// the window (released). A term stopping on a storm releases nothing and
// ends no run (ok false).
func (e *engine) succeed() (release []heldRecord, run int, ok bool) {
	g := &e.storms
	if g.stormed {
		return nil, 0, false
	}
	g.succeeded = true
	release = g.take()
	run, g.run = g.run, 0
	return release, run, true
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
		return &PoisonStormError{Run: g.run, MaxRun: e.storm.maxRun, InWindow: g.count, Window: e.storm.window,
			MaxShare: e.storm.maxShare, First: h.r.Offset, Cause: h.cause}
	}
	return nil
}

// atEnd is the storm of a replay's partition that read its range to the
// end holding records (none of its records succeeded), and the first of
// them; nil when it holds none.
func (e *engine) atEnd() (*PoisonStormError, *heldRecord) {
	if len(e.storms.held) == 0 {
		return nil, nil
	}
	h := &e.storms.held[0]
	return &PoisonStormError{Run: len(e.storms.held), MaxRun: e.storm.maxRun, First: h.r.Offset,
		NoSuccess: true, AtEnd: true, Cause: h.cause}, h
}

// endRun ends the term's run of failures: it returns the run, for the
// caller to take from the pipeline's sum, and the records held, unlanded,
// which the partition's next owner reads again.
func (e *engine) endRun() (run int, held []heldRecord) {
	run, e.storms.run = e.storms.run, 0
	return run, e.storms.take()
}
