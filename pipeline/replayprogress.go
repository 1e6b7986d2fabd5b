package pipeline

import (
	"sort"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// ReplayProgress is one partition of a replay (or a dry run) so far.
type ReplayProgress struct {
	Partition  int32 // the partition of the replay's topic
	From, To   int64 // the planned range; To exclusive
	Begin      int64 // where this run began: From, or the checkpoint of an earlier run
	Landed     int64 // every record below it has landed (or, in a dry run, been checked)
	Epoch      int64 // the replay's epoch on the partition; 0 in a dry run
	Applied    int64 // keys applied, counted as PartitionStats.Applied (dry run: would be applied)
	Suppressed int64 // records suppressed (dry run: would be)
	// Poison counts records the sink refuses (no usable key, a bad value):
	// dead-lettered in a run, would-be poison in a dry run.
	Poison int64
	Done   bool // reached To and committed it (dry run: checked to To)
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
		out[i].Epoch, out[i].Applied, out[i].Suppressed, out[i].Poison = s.Epoch, s.Applied, s.Suppressed, s.DeadLettered
		if s.Landed > out[i].Landed {
			out[i].Landed = s.Landed
		}
		if out[i].Done {
			out[i].Landed = max(out[i].Landed, out[i].To)
		}
	}
	return out
}
