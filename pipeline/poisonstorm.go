package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// ErrPoisonStorm is the Err of a *RecordError for a poison record that
// would make dead-lettering exceed its bound (DeadLetterMaxRun,
// DeadLetterMaxShare): so many poison records in a row, or in a window, say
// that the configuration (where the business key comes from, the effect's
// fields) rather than the data is wrong, and dead-lettering on would empty
// the topic into its dead-letter topic. The record is not dead-lettered and
// the partition stops before it; its Cause is a *PoisonStormError.
//
// Records that fail for good of any cause (poison records, effects given
// up) take one path: see DeadLetterMaxRun.
var ErrPoisonStorm = errors.New("pipeline: poison storm: dead-letter bound exceeded")

// Defaults of DeadLetterMaxRun and DeadLetterMaxShare.
const (
	DefaultDeadLetterMaxRun   = 50   // poison records in a row
	DefaultDeadLetterMaxShare = 0.2  // share of the window's records that may be poison
	DefaultDeadLetterWindow   = 1000 // records in the window
)

// PoisonStormError is the Cause of a *RecordError whose Err is
// ErrPoisonStorm: which bound the record would exceed and the counts.
type PoisonStormError struct {
	// Run counts the records that failed for good with no success of
	// their partitions since, over the pipeline, this one included; MaxRun
	// is its bound (0: none).
	Run, MaxRun int
	// InWindow counts the records dead-lettered among the partition's last
	// Window records, this one included; MaxShare is the share of Window
	// allowed (0: none).
	InWindow, Window int
	MaxShare         float64 // the share of Window that may be poison; 0: no bound
	// First is the offset of the first record of the partition's run of
	// failures (held, none of them dead-lettered): its committed offset
	// stays at or before it.
	First int64
	// DeadLettered counts the records of the run before First that were
	// dead-lettered while the partition was idle (DeadLetterMaxRun): in
	// the dead-letter topic, committed past.
	DeadLettered int
	// NoSuccess is set when no record of the partition succeeded in the
	// term. AtEnd is set when a replay's partition read its range to the
	// end holding Run records and none succeeded.
	NoSuccess, AtEnd bool
	// Cause is the record's own failure (wrapping sink.ErrNoKey,
	// ErrBadValue, ErrCrossSlot, or ErrEffectFailed).
	Cause error
}

// Error names the bound exceeded, the counts and the record's failure.
func (e *PoisonStormError) Error() string {
	if e.AtEnd {
		return fmt.Sprintf("the range ended with %d records failed for good and none succeeded (the first at offset %d), none dead-lettered: %v",
			e.Run, e.First, e.Cause)
	}
	if e.MaxRun > 0 && e.Run > e.MaxRun {
		what := fmt.Sprintf("none dead-lettered from offset %d, the first of the partition's run", e.First)
		switch {
		case e.NoSuccess:
			what = fmt.Sprintf("none of the partition's records succeeded, none dead-lettered from offset %d", e.First)
		case e.DeadLettered > 0:
			what = fmt.Sprintf("none dead-lettered from offset %d; %d of the run before it were, while the partition was idle", e.First, e.DeadLettered)
		}
		return fmt.Sprintf("%d records failed for good with no success since over the pipeline's partitions, bound %d (%s): %v",
			e.Run, e.MaxRun, what, e.Cause)
	}
	return fmt.Sprintf("%d dead letters among the last %d records, bound %.0f%%: %v", e.InWindow, e.Window, 100*e.MaxShare, e.Cause)
}

// Unwrap returns the record's failure.
func (e *PoisonStormError) Unwrap() error { return e.Cause }

// stormGate is one partition's side of the storm bounds, for one term:
// its run of records that failed for good with no later record of the
// partition succeeded yet, held, and a window of its last records, dead
// letter or not. Plain state inside the partition
// engine, which decides on it (enginestorm.go); the worker's storm path
// (stormpath.go) keeps the pipeline's sum and writes the dead letters.
type stormGate struct {
	held      []heldRecord // the run: failed for good, no later success yet; by offset
	aside     int          // records of the run dead-lettered while the partition was idle (engine.idle)
	lastHold  time.Time    // when the newest record was held
	best      int64        // the highest offset that succeeded in this term; -1: none
	succeeded bool         // a record of the partition succeeded in this term
	stormed   bool         // the term stops on a storm: nothing held is released
	ring      []bool       // the window's records: dead letter or not; nil without a share bound
	next      int
	seen      int // records in ring, up to its length
	count     int // dead letters in ring
}

// heldRecord is a record that failed for good, and how.
type heldRecord struct {
	r        sink.Record
	cause    error
	attempts int
}

// hold adds h, keeping held by offset.
func (g *stormGate) hold(h heldRecord) {
	i := len(g.held)
	for i > 0 && g.held[i-1].r.Offset > h.r.Offset {
		i--
	}
	g.held = append(g.held, heldRecord{})
	copy(g.held[i+1:], g.held[i:])
	g.held[i] = h
}

// takeBelow returns the held records below off and forgets them.
func (g *stormGate) takeBelow(off int64) []heldRecord {
	i := 0
	for i < len(g.held) && g.held[i].r.Offset < off {
		i++
	}
	if i == 0 {
		return nil
	}
	h := slices.Clone(g.held[:i])
	g.held = slices.Delete(g.held, 0, i)
	return h
}

// take returns the held records and forgets them.
func (g *stormGate) take() []heldRecord {
	h := g.held
	g.held = nil
	return h
}

// see counts one record of the window: a dead letter or a success.
func (g *stormGate) see(dead bool) {
	if g.ring == nil {
		return
	}
	if g.seen == len(g.ring) && g.ring[g.next] {
		g.count--
	}
	g.seen = min(g.seen+1, len(g.ring))
	g.ring[g.next] = dead
	if dead {
		g.count++
	}
	g.next = (g.next + 1) % len(g.ring)
}
