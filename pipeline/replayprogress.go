package pipeline

import (
	"sort"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// ReplayProgress is one partition of a replay (or a dry run) so far.
type ReplayProgress struct {
	Partition int32 // the partition of the replay's topic
	From, To  int64 // the planned range; To exclusive
	Begin     int64 // where this run began: From, or the checkpoint of an earlier run
	Landed    int64 // every record below it has landed (or, in a dry run, been checked)
	Epoch     int64 // the replay's epoch on the partition; 0 in a dry run
	// Read counts the data records read and landed from Begin on (dry run:
	// checked): Applied + Suppressed + Poison, once the partition is done.
	// Transaction markers are not records.
	Read int64
	// Applied counts keys applied, as PartitionStats.Applied: once a commit
	// moved past them, including keys this id applied in an earlier run
	// that did not commit past them (Redelivered); dry run: would be
	// applied.
	Applied int64
	// Suppressed counts records whose key was applied already, by others
	// (a consumer group, another replay, an earlier record of the range);
	// dry run: would be.
	Suppressed int64
	// Poison counts records the sink refuses (no usable key, a bad value):
	// in a run dead-lettered now or found dead-lettered already (their
	// marker done: not written again, counted in DeadLetterReplays); in a
	// dry run would-be poison.
	Poison int64
	// DeadLetterReplays counts, of Poison, the records an earlier run or
	// consumer had dead-lettered already.
	DeadLetterReplays int64
	Done              bool // reached To and committed it (dry run: checked to To)
}

// Progress returns every partition's progress, by partition. It is safe to
// call while Run or DryRun runs; it takes two mutexes and copies.
func (r *Replay) Progress() []ReplayProgress {
	r.mu.Lock()
	out := make([]ReplayProgress, 0, len(r.parts))
	for p, rp := range r.parts {
		out = append(out, ReplayProgress{Partition: p, From: rp.rng.From, To: rp.rng.To, Begin: rp.begin,
			Landed: rp.begin, Done: rp.done.Load()})
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	stats := make(map[checkpoint.Partition]PartitionStats)
	for _, s := range r.stats.snapshot() {
		stats[s.Partition] = s
	}
	for i := range out {
		s, ok := stats[checkpoint.Partition{Topic: r.topic, Partition: out[i].Partition}]
		if !ok {
			continue
		}
		out[i].Epoch, out[i].Read, out[i].Applied = s.Epoch, s.Attempts, s.Applied
		out[i].Suppressed = s.Suppressed - s.Redelivered // Applied counts those
		out[i].Poison, out[i].DeadLetterReplays = s.DeadLettered+s.DeadLetterReplays, s.DeadLetterReplays
		if s.Landed > out[i].Landed {
			out[i].Landed = s.Landed
		}
		if out[i].Done {
			out[i].Landed = max(out[i].Landed, out[i].To)
		}
	}
	return out
}
