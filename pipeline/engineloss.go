package pipeline

import "github.com/shardpipe/shardpipe/sink"

// redoRecord is a record whose effect landed past the last commit, and the
// loss count when it was first applied in this term (or applied again
// last): a count that moved since says its ledger writes may be lost.
type redoRecord struct {
	r      sink.Record
	lossAt uint64
}

// exposed returns the indexes in redo of the records below point whose
// writes a loss counted since they were applied may have taken (the count
// is now n). Each record is judged by the count when it was applied, not by
// one baseline for the partition: a record still running when the loss was
// counted is exposed however many others started and landed since.
func (e *engine) exposed(point int64, n uint64) []int {
	var idx []int
	for i, r := range e.redo {
		if r.r.Offset < point && r.lossAt != n {
			idx = append(idx, i)
		}
	}
	return idx
}

// lost reports whether a loss (the count is now n) may have taken the
// writes of a record below point.
func (e *engine) lost(point int64, n uint64) bool { return len(e.exposed(point, n)) > 0 }

// reapplied notes that the records at idx in redo were applied again,
// and known, with the loss count at n.
func (e *engine) reapplied(idx []int, n uint64) {
	for _, i := range idx {
		e.redo[i].lossAt = n
	}
}

// committedRedo forgets the records a commit at point moved past; those
// past it (landed beyond a hole, with MaxInFlight) stay.
func (e *engine) committedRedo(point int64) {
	kept := e.redo[:0]
	for _, r := range e.redo {
		if r.r.Offset >= point {
			kept = append(kept, r)
		}
	}
	clear(e.redo[len(kept):])
	e.redo = kept
	if len(kept) == 0 && cap(e.redo) > e.redoCap {
		e.redo = nil // do not keep a large buffer after a long stretch of failed commits
	}
}
