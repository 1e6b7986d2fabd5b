package checkpoint

import (
	"fmt"
	"sort"
)

// Tracker follows the records of one partition from dispatch to landed and
// says how far the partition may be committed.
//
// Records are started in increasing offset order (Kafka hands a partition's
// records in order; offsets may have gaps from compaction or transaction
// markers) and may land in any order. The commit point is the offset after the
// highest started record below which every started record has landed: a record
// whose effect is unknown (started, never landed) holds the commit point at its
// own offset for as long as it stays unknown.
//
// A Tracker is not safe for concurrent use; each partition worker owns one.
// Start and the popping of landed records are amortised O(1); Land on a
// record other than the oldest costs a binary search over the in-flight
// records.
type Tracker struct {
	partition Partition
	point     int64   // commit point: every started record below it has landed
	committed int64   // last commit point handed to Committed
	flight    []entry // started records not yet folded into point, by offset
	landed    int     // records landed since the last Committed
}

type entry struct {
	offset int64
	landed bool
}

// NewTracker starts tracking p from start, the offset of the next record to
// process (the committed offset the partition was resumed from).
func NewTracker(p Partition, start int64) *Tracker {
	return &Tracker{partition: p, point: start, committed: start}
}

// Start registers a record whose effect is about to be attempted. Offsets must
// be at or past the commit point and greater than every offset started before.
func (t *Tracker) Start(offset int64) error {
	last := t.point - 1
	if n := len(t.flight); n > 0 {
		last = t.flight[n-1].offset
	}
	if offset <= last {
		return fmt.Errorf("tracker %s: start offset %d not after %d", t.partition, offset, last)
	}
	t.flight = append(t.flight, entry{offset: offset})
	return nil
}

// Land records that the effect of the record at offset has landed (applied or
// suppressed by the ledger: either way it is known). It folds every landed
// record at the front into the commit point.
func (t *Tracker) Land(offset int64) error {
	i := sort.Search(len(t.flight), func(i int) bool { return t.flight[i].offset >= offset })
	if i == len(t.flight) || t.flight[i].offset != offset {
		return fmt.Errorf("tracker %s: land offset %d was not started", t.partition, offset)
	}
	if t.flight[i].landed {
		return fmt.Errorf("tracker %s: offset %d landed twice", t.partition, offset)
	}
	t.flight[i].landed = true
	t.landed++
	n := 0
	for n < len(t.flight) && t.flight[n].landed {
		n++
	}
	if n > 0 {
		t.point = t.flight[n-1].offset + 1
		// Shift rather than reslice so the backing array does not grow
		// without bound on a long-running partition.
		t.flight = t.flight[:copy(t.flight, t.flight[n:])]
	}
	return nil
}

// CommitPoint is the offset the partition may be committed to now.
func (t *Tracker) CommitPoint() int64 { return t.point }

// Dirty reports whether the commit point moved past the last committed one.
func (t *Tracker) Dirty() bool { return t.point > t.committed }

// LandedSinceCommit counts records landed since the last Committed; the commit
// policy reads it.
func (t *Tracker) LandedSinceCommit() int { return t.landed }

// InFlight counts started records whose effects have not been folded into the
// commit point.
func (t *Tracker) InFlight() int { return len(t.flight) }

// Committed records that offset was committed. It resets LandedSinceCommit.
func (t *Tracker) Committed(offset int64) {
	if offset > t.committed {
		t.committed = offset
	}
	t.landed = 0
}
