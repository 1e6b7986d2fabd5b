package admin

import (
	"context"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
)

// PartitionLag is one partition's position for a group. The JSON names are
// those of `shardpipe status --json`.
type PartitionLag struct {
	// Topic is the partition's topic.
	Topic string `json:"topic"`
	// Partition is the partition number.
	Partition int32 `json:"partition"`
	// Committed is the group's committed offset; -1 when nothing is
	// committed.
	Committed int64 `json:"committed"`
	// LogStart is the partition's log start offset.
	LogStart int64 `json:"log_start"`
	// LogEnd is the high watermark.
	LogEnd int64 `json:"log_end"`
	// LastStable is the last stable offset: the end a read_committed
	// consumer reaches (the high watermark, unless a transaction is open).
	LastStable int64 `json:"last_stable"`
	// Lag is the offsets from Committed (LogStart when nothing is
	// committed) to LastStable, at least 0.
	Lag int64 `json:"lag"`
	// Member is the member that owns the partition ("" for none); set by
	// DescribeGroup only.
	Member string `json:"member,omitempty"`
}

// GroupLag reads the committed offsets of group for topics and the topics'
// start, end and last stable offsets, sorted by topic and partition. Lag is
// measured to the last stable offset, the end a read_committed consumer
// (such as pipeline) reaches, so a group that is done has lag 0 on
// transactional topics too. It works for classic and consumer-protocol
// groups alike (OffsetFetch and ListOffsets, no DescribeGroups), and costs
// one OffsetFetch and three ListOffsets requests per broker. A group with
// no commits has lag from the log start.
func GroupLag(ctx context.Context, adm *kadm.Client, group string, topics ...string) ([]PartitionLag, error) {
	commits, err := adm.FetchOffsetsForTopics(ctx, group, topics...)
	if err != nil {
		return nil, fmt.Errorf("committed offsets of group %q: %w", group, err)
	}
	var cerr error
	commits.EachError(func(o kadm.OffsetResponse) {
		if cerr == nil {
			cerr = fmt.Errorf("committed offset of group %q on %s/%d: %w", group, o.Topic, o.Partition, o.Err)
		}
	})
	if cerr != nil {
		return nil, cerr
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %v: %w", topics, err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("end offsets of %v: %w", topics, err)
	}
	stables, err := adm.ListCommittedOffsets(ctx, topics...)
	if err == nil {
		err = stables.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("last stable offsets of %v: %w", topics, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("start offsets of %v: %w", topics, err)
	}
	var out []PartitionLag
	ends.Each(func(o kadm.ListedOffset) {
		pl := PartitionLag{Topic: o.Topic, Partition: o.Partition, Committed: -1, LogEnd: o.Offset, LastStable: o.Offset}
		if s, ok := stables.Lookup(o.Topic, o.Partition); ok && s.Err == nil {
			pl.LastStable = s.Offset
		}
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok && s.Err == nil {
			pl.LogStart = s.Offset
		}
		from := pl.LogStart
		if c, ok := commits.Lookup(o.Topic, o.Partition); ok && c.Err == nil && c.At >= 0 {
			pl.Committed = c.At
			from = c.At
		}
		pl.Lag = max(pl.LastStable-from, 0)
		out = append(out, pl)
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return out, nil
}

// TotalLag sums the lag of ps.
func TotalLag(ps []PartitionLag) int64 {
	var n int64
	for _, p := range ps {
		n += p.Lag
	}
	return n
}
