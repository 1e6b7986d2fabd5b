package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
)

// partitionLag is one partition's position for a group.
type partitionLag struct {
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	Committed  int64  `json:"committed"` // -1: nothing committed
	LogStart   int64  `json:"log_start"`
	LogEnd     int64  `json:"log_end"`     // high watermark
	LastStable int64  `json:"last_stable"` // last stable offset: the end a read_committed consumer reaches
	Lag        int64  `json:"lag"`         // offsets from the committed one (the log start when none) to the last stable one
	Member     string `json:"member,omitempty"`
}

// groupLag reads the committed offsets of group for topics and the topics'
// start, end and last stable offsets. Lag is measured to the last stable
// offset, the end a read_committed consumer can reach: the high watermark,
// except where a transaction is still open (its records and everything after
// them wait for its end). It works for classic and consumer-protocol groups
// alike (OffsetFetch and ListOffsets, no DescribeGroups).
func groupLag(ctx context.Context, adm *kadm.Client, group string, topics []string) ([]partitionLag, error) {
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
	var out []partitionLag
	ends.Each(func(o kadm.ListedOffset) {
		pl := partitionLag{Topic: o.Topic, Partition: o.Partition, Committed: -1, LogEnd: o.Offset, LastStable: o.Offset}
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

// totalLag sums the lag of ps.
func totalLag(ps []partitionLag) int64 {
	var n int64
	for _, p := range ps {
		n += p.Lag
	}
	return n
}
