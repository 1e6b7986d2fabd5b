package pipeline

import (
	"sort"
	"sync"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// PartitionStats are one partition's counters since the pipeline started,
// across all the terms it held the partition.
type PartitionStats struct {
	Partition checkpoint.Partition // whose counters these are
	Epoch     int64                // epoch of the latest term
	Held      bool                 // assigned to this pipeline now
	Attempts  int64                // records whose effects were attempted
	// Applied counts the business keys whose effect this pipeline accounts
	// for. A record counts when a commit of this pipeline moves past it and
	// its key's claim names it (the sink reported Applied, or Redelivered:
	// the claim of an earlier term of this group, or replay id). A term
	// that ends before committing past a record it applied (a crash, a lost
	// partition, a fenced commit) does not count it; the owner that commits
	// past it meets the claim as Redelivered and does. So, summed over every
	// process of the group, each key is counted once, also when the first
	// owner never learnt that its write landed (a lost reply). It trails the
	// effects by up to a commit interval. With CountOnce a record counts
	// when a commit past it is sent (after the group's mark was raised), so
	// a commit whose reply was lost is counted by its sender, and a record
	// the group reads again below the mark (reset-offsets back) is not
	// counted again. Without it, a commit the broker applied whose reply
	// was lost, after which the term ended, leaves the key counted by
	// nobody, and records the same group reads again after committing past
	// them count again. Another group or a replay meets them as Suppressed.
	// The counts live in the process: they end with it.
	Applied int64
	// Claimed counts records whose claim this pipeline wrote (the sink
	// reported Applied), when it reported it: the effects this process
	// performed, whether or not it then committed past them.
	Claimed int64
	// Suppressed counts records whose effect was not performed because their
	// key was claimed already: for another record, or for this record under
	// an earlier term (those are also counted in Redelivered).
	Suppressed int64
	// Redelivered counts, of Suppressed, the records whose key's claim
	// names the same record under an earlier term of this group (a replay
	// after a crash, a lost reply or a rebalance): their effect was
	// performed once, by that term.
	Redelivered int64
	// DeadLettered counts poison records this pipeline wrote to the
	// dead-letter topic.
	DeadLettered int64
	// DeadLetterReplays counts poison records it found already written
	// there (a replay after a crash or rebalance), which are not written
	// again.
	DeadLetterReplays int64
	Start             int64 // offset the latest term began at (its first record); -1 before any record
	Landed            int64 // offset below which every effect has landed (the commit point); -1 when none
	Committed         int64 // last offset committed here; -1 when none
	Fenced            int64 // commits refused as stale, by the local fence or the broker
	// StableOffset is the partition's last stable offset (the end a
	// read-committed consumer reads to) as the latest fetch response gave
	// it; -1 before any. Lag is measured against it.
	StableOffset int64
	// BusySince is when the partition's Redis or Kafka call in flight (a
	// sink round trip, a durability wait and commit) began; zero between
	// calls. A call far older than its timeouts means the worker is wedged.
	BusySince time.Time
	// CommitFailures counts the commits of the current term that failed in
	// a row (0 once one lands): while it grows, the partition stops
	// fetching once MaxUncommitted records wait.
	CommitFailures int64
	// TermFenced is set when a commit of the current term was refused as
	// stale and the term fenced: the partition waits for the group to take
	// it back. Cleared by the next assignment.
	TermFenced bool
	// LastError is the text of the latest failed sink call or commit of the
	// partition ("" for none), at LastErrorAt.
	LastError string
	// LastErrorAt is when LastError happened; zero for none.
	LastErrorAt time.Time
	// InFlight counts the records whose effects run now (MaxInFlight).
	InFlight int64
	// Retrying counts the records whose effect failed and that wait for
	// their retry (MaxInFlight): the commit point cannot pass the lowest.
	Retrying int64
	// EffectsGivenUp counts records whose effect failed EffectAttempts
	// times (or was rejected) and that were dead-lettered.
	EffectsGivenUp int64
	// FailedHeld counts the records held now because they failed for good
	// with no success of the partition since: not dead-lettered yet, the
	// commit point before the first (DeadLetterMaxRun).
	FailedHeld int64
}

// stats keeps PartitionStats behind one mutex; workers update once per batch.
type stats struct {
	mu sync.Mutex
	m  map[checkpoint.Partition]*PartitionStats
}

func (s *stats) update(p checkpoint.Partition, fn func(*PartitionStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[checkpoint.Partition]*PartitionStats)
	}
	ps := s.m[p]
	if ps == nil {
		ps = &PartitionStats{Partition: p, Start: -1, Landed: -1, Committed: -1, StableOffset: -1}
		s.m[p] = ps
	}
	fn(ps)
}

func (s *stats) snapshot() []PartitionStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PartitionStats, 0, len(s.m))
	for _, ps := range s.m {
		out = append(out, *ps)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Partition, out[j].Partition
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return out
}

// Summary is the sum of PartitionStats' counters over partitions (see
// PartitionStats for what each counts).
type Summary struct {
	Attempts          int64 // records whose effects were attempted
	Applied           int64 // business keys whose effect this pipeline accounts for, once committed past
	Claimed           int64 // records whose claim this pipeline wrote
	Suppressed        int64 // records whose key was claimed already
	Redelivered       int64 // of Suppressed, those claimed for the same record under an earlier term
	DeadLettered      int64 // poison records written to a dead-letter topic
	DeadLetterReplays int64 // poison records found already written there
	Fenced            int64 // commits refused as stale
}

// Totals sums the counters of ps. It costs one pass over ps.
func Totals(ps []PartitionStats) Summary {
	var s Summary
	for _, p := range ps {
		s.Attempts += p.Attempts
		s.Applied += p.Applied
		s.Claimed += p.Claimed
		s.Suppressed += p.Suppressed
		s.Redelivered += p.Redelivered
		s.DeadLettered += p.DeadLettered
		s.DeadLetterReplays += p.DeadLetterReplays
		s.Fenced += p.Fenced
	}
	return s
}
