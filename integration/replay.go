package integration

import (
	"context"
	"testing"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/scenario"
)

// ReplayConfig sizes Replay. Zero fields take the defaults: 4 partitions of
// 200 records, a commit every 50, the replay from offset 0.
type ReplayConfig struct {
	Partitions   int32
	PerPartition int
	CommitEvery  int   // Setup.Options may override it
	From         int64 // offset in every partition where the replay starts
}

// ReplayFigures are Replay's own figures.
type ReplayFigures struct {
	Group      string // the group that replayed
	Replayed   int64  // records replayed
	Applied    int64  // effects the replay applied (0 with a working ledger)
	Suppressed int64
	// Committed is the replay group's committed offset per partition.
	Committed map[checkpoint.Partition]int64
}

// Replay runs a replay of a range: the topic is processed to its end, then a
// second group whose offsets were moved back to From (as an operator does
// with reset-offsets to recover) processes the range again over the same
// ledger. Every replayed effect had landed, so each must be suppressed.
// A few seconds on a local broker.
func Replay(ctx context.Context, t testing.TB, s Setup, cfg ReplayConfig) *Report {
	t.Helper()
	rn := s.start(ctx, t)
	res, err := scenario.Replay(rn.ctx, rn.env, scenario.ReplayConfig(cfg))
	if err != nil {
		t.Fatalf("integration: replay scenario: %v", err)
	}
	r := rn.finish(t, "replay", res.Keys, res.Stats)
	committed, _, err := offsets(rn.ctx, NewAdmin(t, rn.env.Brokers), res.ReplayGroup, rn.env.Topic)
	if err != nil {
		t.Fatalf("integration: replay scenario: %v", err)
	}
	r.Replay = &ReplayFigures{Group: res.ReplayGroup, Replayed: res.Replayed, Applied: res.ReplayApplied,
		Suppressed: res.ReplaySuppressed, Committed: committed}
	return r
}
