package checkpoint

import "fmt"

// Partition names one shard: a topic partition.
type Partition struct {
	Topic     string // the Kafka topic
	Partition int32  // the partition number, from 0
}

// String returns topic/partition.
func (p Partition) String() string { return fmt.Sprintf("%s/%d", p.Topic, p.Partition) }

// Position is a committed offset and the epoch it was committed under. Offset
// is the next record to process, as Kafka commits it.
type Position struct {
	Epoch  int64 // the fencing epoch of the term that committed it (Kafka.Load: the term held here, if any)
	Offset int64 // the offset of the next record to process; 0 when nothing was committed
}

// Verdict is what Decide concluded about a commit.
type Verdict uint8

const (
	// Advance means the commit moves the position (or starts a new epoch).
	Advance Verdict = iota + 1
	// Same means the commit repeats the current position: an idempotent no-op.
	Same
	// StaleEpoch means the commit's epoch is older than the current one.
	StaleEpoch
	// StaleOffset means the commit would move the offset backwards in one epoch.
	StaleOffset
)

// String returns advance, same, stale-epoch or stale-offset.
func (v Verdict) String() string {
	switch v {
	case Advance:
		return "advance"
	case Same:
		return "same"
	case StaleEpoch:
		return "stale-epoch"
	case StaleOffset:
		return "stale-offset"
	}
	return fmt.Sprintf("verdict(%d)", v)
}

// Decide applies the commit rules to the current position and a proposed one.
// It is pure and allocation free; every store calls it (the Redis store runs
// the same rules in Lua).
//
//   - next.Epoch < cur.Epoch: StaleEpoch.
//   - same epoch, lower offset: StaleOffset.
//   - same epoch, same offset: Same.
//   - same epoch, higher offset, or any higher epoch: Advance.
func Decide(cur, next Position) Verdict {
	switch {
	case next.Epoch < cur.Epoch:
		return StaleEpoch
	case next.Epoch > cur.Epoch:
		return Advance
	case next.Offset < cur.Offset:
		return StaleOffset
	case next.Offset == cur.Offset:
		return Same
	default:
		return Advance
	}
}

// check turns a verdict into the error a store returns, nil for Advance and
// Same.
func check(p Partition, cur, next Position) (Verdict, error) {
	v := Decide(cur, next)
	var sentinel error
	switch v {
	case StaleEpoch:
		sentinel = ErrStaleEpoch
	case StaleOffset:
		sentinel = ErrStaleOffset
	default:
		return v, nil
	}
	return v, &CommitError{Partition: p, Epoch: next.Epoch, Offset: next.Offset, Current: cur, Err: sentinel}
}
