package pipeline

import (
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// engine is one partition's state for one term, the part both schedules
// (batches, MaxInFlight) share: what was read and what landed (the
// tracker), when a commit is due and how a failed one backs off, which
// landed records a ledger loss may have taken (redo), which records count
// in Applied once committed past (uncounted), and the storm bounds
// (stormGate). It is plain state: no clock (every method that needs the
// time takes now), no I/O, no goroutines. The worker is its driver: it
// reads records, runs effects, sends commits and writes dead letters, and
// tells the engine each outcome; engine_test.go and the scripts in
// testdata/engine drive it alone, and engine_check_test.go drives it with
// random interleavings and checks its invariants after every step.
type engine struct {
	policy checkpoint.Policy
	// limits judge failed attempts (onFailure); limits.retry also paces
	// a failed commit's retries.
	limits   retryLimits
	inFlight bool  // the MaxInFlight schedule: records land out of order
	losses   bool  // the barrier counts losses (LossReporter): landed records are kept
	mark     int64 // the group's commit mark at the term's start (CountOnce); -1: none
	storm    stormLimits
	redoCap  int // the largest redo buffer kept once empty
	// maxBatch and queueRecords bound what next takes: a batch, or the
	// records MaxInFlight holds.
	maxBatch, queueRecords int

	tr         *checkpoint.Tracker // nil before the term's first record
	since      time.Time           // when the oldest uncommitted record landed
	retryAt    time.Time           // no commit before this, after a failed one
	failures   int                 // commits failed in a row
	lastCommit int64               // offset this term last committed, -1 for none
	// foldedAt is the tracker's Folded at the last commit: with
	// MaxInFlight, commits fall when Folded crosses a multiple of
	// CommitEvery, as batches make them.
	foldedAt  int64
	uncounted []int64      // offsets landed that credit Applied once committed past (landing order)
	redo      []redoRecord // records landed past the last commit, with the loss count when applied
	storms    stormGate
	end       termEnd // how the term's loop ends (engineend.go)
}

// stormLimits are the storm bounds of DeadLetters (zero: none).
type stormLimits struct {
	maxRun   int
	maxShare float64
	window   int
	idle     time.Duration // held records with no success after them are dead-lettered once idle this long
}

// newEngine is the engine of a term run under cfg, with the storm bounds
// of d (nil: no dead letters).
func newEngine(cfg *config, d *deadLetterConfig) *engine {
	e := &engine{policy: cfg.policy, limits: retryLimits{retry: cfg.retry, poison: cfg.poison, effectAttempts: cfg.effectAttempts}, inFlight: cfg.maxInFlight > 0, mark: -1, lastCommit: -1,
		redoCap: 4 * cfg.maxBatch, maxBatch: cfg.maxBatch, queueRecords: cfg.queueRecords, storms: stormGate{best: -1}}
	_, e.losses = cfg.barrier.(LossReporter)
	if d != nil {
		e.storm = stormLimits{maxRun: d.maxRun, maxShare: d.maxShare, window: d.window, idle: cfg.policy.Interval}
		if e.storm.idle <= 0 {
			e.storm.idle = defaultConfig().policy.Interval
		}
	}
	return e
}

// begin starts the tracker at the term's first record, start; it reports
// whether it did (false: already started).
func (e *engine) begin(part checkpoint.Partition, start int64) bool {
	if e.tr != nil {
		return false
	}
	e.tr = checkpoint.NewTracker(part, start)
	return true
}

// read notes a record read from the partition (to land before a commit
// may pass it).
func (e *engine) read(offset int64, leaderEpoch int32) error { return e.tr.Start(offset, leaderEpoch) }

// landMarker lands a transaction marker: no effect, known once read.
func (e *engine) landMarker(offset int64, now time.Time) error {
	if err := e.tr.Land(offset); err != nil {
		return err
	}
	e.touch(now)
	return nil
}

// deadLettered lands a record whose dead letter was written (or found
// written): the commit point may pass it.
func (e *engine) deadLettered(offset int64, now time.Time) error { return e.landMarker(offset, now) }

// touch starts the commit interval's clock at now when a record landed
// and none uncommitted had before.
func (e *engine) touch(now time.Time) {
	if e.since.IsZero() {
		e.since = now
	}
}

// landed lands r, whose effect succeeded with res (first applied when the
// loss count was lossAt): it may be committed past, counts in Applied once
// committed past when credited, and is kept for re-application after a
// loss.
func (e *engine) landed(r *sink.Record, res sink.Result, lossAt uint64, now time.Time) error {
	if e.credited(r.Offset, res) {
		e.uncounted = append(e.uncounted, r.Offset)
	}
	if err := e.tr.Land(r.Offset); err != nil {
		return err
	}
	if e.losses {
		e.redo = append(e.redo, redoRecord{r: *r, lossAt: lossAt})
	}
	e.touch(now)
	return nil
}

// credited reports whether a landed record at off whose result is res
// counts in PartitionStats.Applied once committed past: its effect ran
// here (Applied), or its claim names it under an earlier term of the group
// (Redelivered) and no commit of the group passed it before (the mark).
func (e *engine) credited(off int64, res sink.Result) bool {
	return res.Outcome == sink.Applied || res.Outcome == sink.Redelivered && off >= e.mark
}

// room is how many records the next batch may take (batches).
func (e *engine) room(maxBatch int) int {
	landed := 0
	if e.tr != nil {
		landed = e.tr.LandedSinceCommit()
	}
	return e.policy.Room(landed, maxBatch)
}

// admitRoom is how many more records MaxInFlight may hold, holding held,
// at most queueRecords: no more than MaxUncommitted past the last commit.
func (e *engine) admitRoom(queueRecords, held int) int {
	room := queueRecords - held
	if e.tr != nil && e.policy.Max > 0 {
		room = min(room, e.policy.Max-e.tr.SinceCommit())
	}
	return room
}

// due says when the policy wants the next commit, no earlier than the
// backoff after a failed one; false when nothing waits to be committed.
// Batches count the records landed since the last commit; MaxInFlight
// counts those folded into the commit point, a commit due when they cross
// the next multiple of CommitEvery since the term began (so a partition
// whose records number a multiple of it commits its end, as batches do),
// and at once when MaxUncommitted records lie past the last commit.
func (e *engine) due() (time.Time, bool) {
	if e.tr == nil || !e.tr.Dirty() {
		return time.Time{}, false
	}
	n := e.tr.LandedSinceCommit()
	if e.inFlight {
		n = int(e.tr.Folded() - e.foldedAt)
		if e.policy.Every > 0 {
			n = int(e.tr.Folded() - (e.foldedAt - e.foldedAt%int64(e.policy.Every)))
		}
		if e.policy.Max > 0 && e.tr.SinceCommit() >= e.policy.Max {
			n = max(n, e.policy.Max)
		}
	}
	at, ok := e.policy.Next(n, e.since)
	if ok && e.retryAt.After(at) {
		at = e.retryAt
	}
	return at, ok
}

// dueAt reports whether a commit is due at now.
func (e *engine) dueAt(now time.Time) bool {
	at, ok := e.due()
	return ok && !at.After(now)
}

// dirty reports whether the commit point moved past the last commit.
func (e *engine) dirty() bool { return e.tr != nil && e.tr.Dirty() }

// committed notes a commit at point that landed: the records below it are
// neither kept for re-application nor counted again, and the backoff and
// the interval's clock start over (the clock at now for records landed
// past a hole).
func (e *engine) committed(point int64, now time.Time) {
	e.committedRedo(point)
	e.tr.Committed(point)
	e.lastCommit = point
	e.foldedAt = e.tr.Folded()
	e.since, e.retryAt, e.failures = time.Time{}, time.Time{}, 0
	if e.tr.LandedSinceCommit() > 0 {
		e.since = now // landed past a hole (MaxInFlight): not covered yet
	}
}

// commitFailed notes a commit that failed and will be retried; it returns
// the failures in a row and the backoff before the retry.
func (e *engine) commitFailed(now time.Time) (int, time.Duration) {
	e.failures++
	backoff := e.limits.retry.Ceiling(e.failures)
	e.retryAt = now.Add(backoff)
	return e.failures, backoff
}

// countBelow takes from uncounted the records below point and returns how
// many: they count in Applied now (a commit moves past them). With
// MaxInFlight records land out of order, so uncounted is not sorted.
func (e *engine) countBelow(point int64) int {
	n := 0
	kept := e.uncounted[:0]
	for _, off := range e.uncounted {
		if off < point {
			n++
		} else {
			kept = append(kept, off)
		}
	}
	e.uncounted = kept
	return n
}

// committedOffset is the partition's committed offset, for messages: the
// one this term last committed, or, before its first commit, the one the
// term started from; -1 before the term's first record.
func (e *engine) committedOffset() int64 {
	if e.tr == nil {
		return e.lastCommit
	}
	return e.tr.LastCommitted()
}
