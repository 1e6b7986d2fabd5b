package pipeline

import (
	"errors"
	"fmt"
)

// ErrPoisonStorm is the Err of a *RecordError for a poison record that
// would make dead-lettering exceed its bound (DeadLetterMaxRun,
// DeadLetterMaxShare): so many poison records in a row, or in a window, say
// that the configuration (where the business key comes from, the effect's
// fields) rather than the data is wrong, and dead-lettering on would empty
// the topic into its dead-letter topic. The record is not dead-lettered and
// the partition stops before it; its Cause is a *PoisonStormError.
var ErrPoisonStorm = errors.New("pipeline: poison storm: dead-letter bound exceeded")

// Defaults of DeadLetterMaxRun and DeadLetterMaxShare.
const (
	DefaultDeadLetterMaxRun   = 50   // poison records in a row
	DefaultDeadLetterMaxShare = 0.2  // share of the window's records that may be poison
	DefaultDeadLetterWindow   = 1000 // records in the window
)

// DeadLetterMaxRun bounds the poison records of a partition dead-lettered
// in a row (default DefaultDeadLetterMaxRun; 0: no bound): the one that
// would exceed it stops the pipeline with a *RecordError wrapping
// ErrPoisonStorm; the committed offset stays before that record, so at most
// n records of a storm are dead-lettered and committed past (PoisonStormError.First
// names where the run began, for a reset-offsets once the configuration is
// fixed). It costs a counter per partition.
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
	// Run counts the partition's poison records in a row, this one
	// included; MaxRun is its bound (0: none).
	Run, MaxRun int
	// InWindow counts the poison records among the partition's last Window
	// records, this one included; MaxShare is the share of Window allowed
	// (0: none).
	InWindow, Window int
	MaxShare         float64 // the share of Window that may be poison; 0: no bound
	// First is the offset of the first record of the run of poison
	// records this one ends.
	First int64
	// Cause is the record's own refusal (wrapping sink.ErrNoKey,
	// ErrBadValue or ErrCrossSlot).
	Cause error
}

// Error names the bound exceeded, the counts and the record's refusal.
func (e *PoisonStormError) Error() string {
	if e.MaxRun > 0 && e.Run > e.MaxRun {
		return fmt.Sprintf("%d poison records in a row from offset %d, bound %d: %v", e.Run, e.First, e.MaxRun, e.Cause)
	}
	return fmt.Sprintf("%d poison records among the last %d, bound %.0f%%: %v", e.InWindow, e.Window, 100*e.MaxShare, e.Cause)
}

// Unwrap returns the record's refusal.
func (e *PoisonStormError) Unwrap() error { return e.Cause }

// stormCount counts a partition's poison records in a row and in a window
// of its last records, for one term.
type stormCount struct {
	run   int
	first int64  // offset of the run's first record
	ring  []bool // the window's records: poison or not; nil without a share bound
	next  int
	seen  int // records in ring, up to its length
	count int // poison records in ring
}

// see counts one landed or refused record of the partition.
func (s *stormCount) see(off int64, poison bool) {
	if poison {
		if s.run == 0 {
			s.first = off
		}
		s.run++
	} else {
		s.run = 0
	}
	if s.ring == nil {
		return
	}
	if s.seen == len(s.ring) && s.ring[s.next] {
		s.count--
	}
	s.seen = min(s.seen+1, len(s.ring))
	s.ring[s.next] = poison
	if poison {
		s.count++
	}
	s.next = (s.next + 1) % len(s.ring)
}

// storm returns the *PoisonStormError of poison record r (cause: its
// refusal) when dead-lettering it would exceed a bound, else nil; it counts
// r either way.
func (w *worker) storm(off int64, cause error) *PoisonStormError {
	d := w.p.dlq.cfg
	if w.storms.ring == nil && d.maxShare > 0 {
		w.storms.ring = make([]bool, d.window)
	}
	w.storms.see(off, true)
	s := &w.storms
	overRun := d.maxRun > 0 && s.run > d.maxRun
	overShare := d.maxShare > 0 && float64(s.count) > d.maxShare*float64(d.window)
	if !overRun && !overShare {
		return nil
	}
	return &PoisonStormError{Run: s.run, MaxRun: d.maxRun, InWindow: s.count, Window: d.window, MaxShare: d.maxShare,
		First: s.first, Cause: cause}
}
