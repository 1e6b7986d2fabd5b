package checkpoint

import (
	"fmt"
	"sort"
)

// Tracker follows the records of one partition from dispatch to landed and
// says how far the partition may be committed, and with which leader epoch.
//
// Records are started in increasing offset order (Kafka hands a partition's
// records in order; offsets may have gaps from compaction or transaction
// markers) and may land in any order. The commit point is the offset after the
// highest started record below which every started record has landed: a record
// whose effect is unknown (started, never landed) holds the commit point at its
// own offset for as long as it stays unknown. The commit point carries the
// leader epoch of the record just before it (KIP-320: the broker stores it
// with the committed offset, and a consumer resuming there can tell a
// truncated log from a valid position).
//
// A Tracker is not safe for concurrent use; each partition worker owns one.
// Start and the popping of landed records are amortised O(1); Land on a
// record other than the oldest costs a binary search over the in-flight
// records.
type Tracker struct {
	partition Partition
	point     int64   // commit point: every started record below it has landed
	epoch     int32   // leader epoch of the record before point; -1 when none folded yet
	committed int64   // last commit point handed to Committed
	flight    []entry // flight[head:]: started records not yet folded into point, by offset
	head      int     // records at the front of flight already folded
	landed    int     // records landed since the last Committed
	folded    int     // records folded into point since the last Committed
	total     int64   // records folded into point since NewTracker
}

type entry struct {
	offset int64
	epoch  int32 // the record's leader epoch
	landed bool
}

// NewTracker starts tracking p from start, the offset of the next record to
// process (the committed offset the partition was resumed from).
func NewTracker(p Partition, start int64) *Tracker {
	return &Tracker{partition: p, point: start, epoch: -1, committed: start}
}

// Start registers a record whose effect is about to be attempted, with the
// leader epoch it was fetched under (kgo.Record.LeaderEpoch; -1 if unknown).
// Offsets must be at or past the commit point and greater than every offset
// started before.
func (t *Tracker) Start(offset int64, leaderEpoch int32) error {
	last := t.point - 1
	if n := len(t.flight); n > t.head {
		last = t.flight[n-1].offset
	}
	if offset <= last {
		return fmt.Errorf("tracker %s: start offset %d not after %d", t.partition, offset, last)
	}
	t.flight = append(t.flight, entry{offset: offset, epoch: leaderEpoch})
	return nil
}

// Land records that the effect of the record at offset has landed (applied or
// suppressed by the ledger: either way it is known). It folds every landed
// record at the front into the commit point.
func (t *Tracker) Land(offset int64) error {
	fl := t.flight[t.head:]
	i := 0
	if len(fl) == 0 || fl[0].offset != offset { // landing in order needs no search
		i = sort.Search(len(fl), func(i int) bool { return fl[i].offset >= offset })
	}
	if i == len(fl) || fl[i].offset != offset {
		return fmt.Errorf("tracker %s: land offset %d was not started", t.partition, offset)
	}
	if fl[i].landed {
		return fmt.Errorf("tracker %s: offset %d landed twice", t.partition, offset)
	}
	fl[i].landed = true
	t.landed++
	n := 0
	for n < len(fl) && fl[n].landed {
		n++
	}
	if n == 0 {
		return nil
	}
	t.point, t.epoch = fl[n-1].offset+1, fl[n-1].epoch
	t.head += n
	t.folded += n
	t.total += int64(n)
	// Folded records are dropped by moving a head, and the array is
	// compacted once they are at least half of it, so that landing costs
	// amortised O(1) and the array does not grow on a long-running partition.
	switch {
	case t.head == len(t.flight):
		t.flight, t.head = t.flight[:0], 0
	case t.head >= len(t.flight)/2:
		t.flight, t.head = t.flight[:copy(t.flight, t.flight[t.head:])], 0
	}
	return nil
}

// CommitPoint is the offset the partition may be committed to now.
func (t *Tracker) CommitPoint() int64 { return t.point }

// CommitLeaderEpoch is the leader epoch to commit with CommitPoint: the
// epoch of the last record before it, -1 when no record has been folded
// into the commit point yet (it is still the start offset).
func (t *Tracker) CommitLeaderEpoch() int32 { return t.epoch }

// Dirty reports whether the commit point moved past the last committed one.
func (t *Tracker) Dirty() bool { return t.point > t.committed }

// LandedSinceCommit counts records landed and not covered by the last
// Committed: landed since it, or landed before it past a record then still
// unknown. The commit policy reads it.
func (t *Tracker) LandedSinceCommit() int { return t.landed }

// InFlight counts started records whose effects have not been folded into the
// commit point.
func (t *Tracker) InFlight() int { return len(t.flight) - t.head }

// Folded counts the records folded into the commit point since NewTracker:
// with records landing out of order, a count policy that wants commits to
// fall every n records (Policy.Every) reads it rather than
// LandedSinceCommit.
func (t *Tracker) Folded() int64 { return t.total }

// SinceCommit counts the records started since the last Committed (or
// the start) that a restart from the committed offset would read again:
// those folded into the commit point since, and those in flight (landed
// past a record still unknown, or unknown). It is what bounds a crash's
// re-reading when records land out of order, where LandedSinceCommit
// misses the unknown ones and those that landed past the commit point
// before the last commit.
func (t *Tracker) SinceCommit() int { return t.folded + t.InFlight() }

// LastCommitted is the last offset handed to Committed, or the start
// given to NewTracker (the committed offset the partition was resumed
// from) before any: the partition's committed offset as far as the tracker
// knows. It costs nothing.
func (t *Tracker) LastCommitted() int64 { return t.committed }

// Committed records that offset, the commit point read before the commit,
// was committed. LandedSinceCommit then counts the records that landed past
// a record still unknown (none when records land in order), and
// SinceCommit the records in flight.
func (t *Tracker) Committed(offset int64) {
	if offset > t.committed {
		t.committed = offset
	}
	t.landed = 0
	for _, e := range t.flight[t.head:] {
		if e.landed {
			t.landed++
		}
	}
	t.folded = 0
}
