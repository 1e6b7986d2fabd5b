package pipeline

import (
	"errors"
	"fmt"

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

// DeadLetterMaxRun bounds the records that failed for good (poison
// records after their attempts, effects given up) with no success of their
// partitions since, summed over the pipeline's partitions (default
// DefaultDeadLetterMaxRun; 0: no bound). The record that would make the sum
// exceed n stops the pipeline with a *RecordError wrapping ErrPoisonStorm,
// its partition's committed offset before it.
//
// Until a record of its partition has succeeded in the term, a record that
// failed for good is held, not dead-lettered: unlanded, the committed
// offset stays before it. The first success shows the configuration reads
// the partition's records: the held records are dead-lettered and landed
// (each through the DeadLetterMaxShare bound), and later failures are
// dead-lettered at once, as a poison record between good ones is. So a
// configuration that no record satisfies (a mistyped key field, an effect
// that refuses every call) dead-letters nothing and commits nothing past a
// failure: PoisonStormError.NoSuccess says so and First names the offset to
// start from once it is fixed. A replay's partition that reads its range to
// the end holding records stops the same way. A term that ends holding
// records leaves them to the partition's next owner. It costs the held
// records' memory, at most n. With n = 0 (no bound) nothing is held: a
// failure is dead-lettered at once.
func DeadLetterMaxRun(n int) DeadLetterOpt {
	return deadLetterOpt(func(d *deadLetterConfig) { d.maxRun, d.maxRunSet = n, true })
}

// DeadLetterMaxShare bounds the share of poison records among a
// partition's last window records (default DefaultDeadLetterMaxShare of
// DefaultDeadLetterWindow; share 0: no bound): the poison record that makes
// more than share x window of them poison stops the pipeline with a
// *RecordError wrapping ErrPoisonStorm. It catches storms that good records
// interleave (a key field only some record types lack). It costs window
// bytes per partition.
func DeadLetterMaxShare(share float64, window int) DeadLetterOpt {
	return deadLetterOpt(func(d *deadLetterConfig) { d.maxShare, d.window, d.maxShareSet = share, window, true })
}

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
	// failures: its committed offset stays at or before it.
	First int64
	// NoSuccess is set when no record of the partition succeeded in the
	// term: nothing of its run was dead-lettered. AtEnd is set when a
	// replay's partition read its range to the end holding Run records.
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
		what := "the partition's run from offset %d dead-lettered"
		if e.NoSuccess {
			what = "none of the partition's records succeeded, none dead-lettered from offset %d"
		}
		return fmt.Sprintf("%d records failed for good with no success since over the pipeline's partitions, bound %d ("+what+"): %v",
			e.Run, e.MaxRun, e.First, e.Cause)
	}
	return fmt.Sprintf("%d dead letters among the last %d records, bound %.0f%%: %v", e.InWindow, e.Window, 100*e.MaxShare, e.Cause)
}

// Unwrap returns the record's failure.
func (e *PoisonStormError) Unwrap() error { return e.Cause }

// stormGate is one partition's side of the storm bounds, for one term:
// its run of records that failed for good since its last success, those
// of them held because it has seen no success yet, and a window of its
// last records, dead letter or not. Plain state inside the partition
// engine, which decides on it (enginestorm.go); the worker's storm path
// (stormpath.go) keeps the pipeline's sum and writes the dead letters.
type stormGate struct {
	run       int          // records failed for good since the last success
	first     int64        // offset of the run's first record
	held      []heldRecord // by offset; only while !succeeded
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
