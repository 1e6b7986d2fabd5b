package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// ErrUnknownPartition means a replay named a partition its topic does not have.
var ErrUnknownPartition = errors.New("pipeline: no such partition")

// Range is the part of one partition a replay reads: offsets From (inclusive)
// to To (exclusive). A Range with From >= To is empty.
type Range struct {
	Partition int32 // the partition of the replay's topic
	From, To  int64 // the first offset read, and the offset after the last
}

// Len is the number of offsets in the range (records, when there are no gaps
// from compaction or transaction markers).
func (r Range) Len() int64 { return max(0, r.To-r.From) }

// Bound is one end of a replay's range: an offset, a time (the first record
// whose timestamp is at or after it), or, as the zero Bound, open (the log's
// start for From, its last stable offset at planning for To).
type Bound struct {
	kind   uint8 // 0 open, 1 offset, 2 time
	offset int64
	at     time.Time
}

// AtOffset is the bound at offset o.
func AtOffset(o int64) Bound { return Bound{kind: 1, offset: o} }

// AtTime is the bound at the first record whose timestamp is at or after t.
func AtTime(t time.Time) Bound { return Bound{kind: 2, at: t} }

// IsOpen reports whether b is the zero Bound.
func (b Bound) IsOpen() bool { return b.kind == 0 }

// String returns the offset, the time in RFC 3339, or "open".
func (b Bound) String() string {
	switch b.kind {
	case 1:
		return strconv.FormatInt(b.offset, 10)
	case 2:
		return b.at.UTC().Format(time.RFC3339Nano)
	}
	return "open"
}

// PlanReplay fixes the ranges of a replay of topic now: one Range per
// partition in parts (every partition of the topic when parts is empty),
// sorted by partition. From is resolved by from and To, exclusive, by to;
// both are clamped to [log start offset, last stable offset], so records
// produced after planning are not part of the replay and a live topic cannot
// make it run forever. It costs three ListOffsets requests per broker, four
// with a time bound. A partition the topic does not have is an error
// wrapping ErrUnknownPartition.
func PlanReplay(ctx context.Context, adm *kadm.Client, topic string, parts []int32, from, to Bound) ([]Range, error) {
	starts, err := listed(adm.ListStartOffsets(ctx, topic))
	if err != nil {
		return nil, fmt.Errorf("plan replay of %s: start offsets: %w", topic, err)
	}
	// The last stable offset: records below it are decided (committed or
	// aborted), so a read_committed fetch reaches it.
	ends, err := listed(adm.ListCommittedOffsets(ctx, topic))
	if err != nil {
		return nil, fmt.Errorf("plan replay of %s: end offsets: %w", topic, err)
	}
	all := starts[topic]
	if len(parts) == 0 {
		for p := range all {
			parts = append(parts, p)
		}
	}
	slices.Sort(parts)
	parts = slices.Compact(parts)
	resolve := func(b Bound, open map[int32]kadm.ListedOffset) (map[int32]int64, error) {
		out := make(map[int32]int64, len(parts))
		var byTime map[int32]kadm.ListedOffset
		if b.kind == 2 {
			lo, err := listed(adm.ListOffsetsAfterMilli(ctx, b.at.UnixMilli(), topic))
			if err != nil {
				return nil, fmt.Errorf("offsets at %s: %w", b, err)
			}
			byTime = lo[topic]
		}
		for _, p := range parts {
			switch b.kind {
			case 0:
				out[p] = open[p].Offset
			case 1:
				out[p] = b.offset
			case 2:
				out[p] = byTime[p].Offset
			}
		}
		return out, nil
	}
	for _, p := range parts {
		if _, ok := all[p]; !ok {
			return nil, fmt.Errorf("plan replay of %s: partition %d: %w (the topic has %d)", topic, p, ErrUnknownPartition, len(all))
		}
	}
	froms, err := resolve(from, all)
	if err != nil {
		return nil, fmt.Errorf("plan replay of %s: from %w", topic, err)
	}
	tos, err := resolve(to, ends[topic])
	if err != nil {
		return nil, fmt.Errorf("plan replay of %s: to %w", topic, err)
	}
	out := make([]Range, 0, len(parts))
	for _, p := range parts {
		lo, hi := all[p].Offset, ends[topic][p].Offset
		f := min(max(froms[p], lo), hi)
		t := min(max(tos[p], lo), hi)
		out = append(out, Range{Partition: p, From: f, To: max(f, t)})
	}
	return out, nil
}

// RecordsBefore counts, per range, the offsets of the range whose records
// are older than t: from From up to the first record at or after t. A replay
// uses it to warn that ledger entries (which live for the ledger's TTL) may
// have expired for those records. It costs one ListOffsets request per
// broker and reads no record; it assumes timestamps grow with offsets, as
// they do for producer (CreateTime) timestamps of one producer and for
// LogAppendTime.
func RecordsBefore(ctx context.Context, adm *kadm.Client, topic string, ranges []Range, t time.Time) (map[int32]int64, error) {
	lo, err := listed(adm.ListOffsetsAfterMilli(ctx, t.UnixMilli(), topic))
	if err != nil {
		return nil, fmt.Errorf("offsets of %s at %s: %w", topic, t.UTC().Format(time.RFC3339), err)
	}
	out := make(map[int32]int64, len(ranges))
	for _, r := range ranges {
		cut := min(max(lo[topic][r.Partition].Offset, r.From), r.To)
		out[r.Partition] = cut - r.From
	}
	return out, nil
}

// listed returns the offsets, or the first error of the request or of a
// partition in it.
func listed(lo kadm.ListedOffsets, err error) (kadm.ListedOffsets, error) {
	if err != nil {
		return nil, err
	}
	if err := lo.Error(); err != nil {
		return nil, err
	}
	return lo, nil
}
