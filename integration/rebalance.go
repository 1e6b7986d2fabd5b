package integration

import (
	"context"
	"testing"

	"github.com/shardpipe/shardpipe/internal/scenario"
)

// RebalanceConfig sizes Rebalance. Zero fields take the defaults: 8
// partitions, 20,000 records in three waves, a commit every 100 records.
type RebalanceConfig struct {
	Partitions  int32
	Records     int
	CommitEvery int // Setup.Options may override it
	// CrashLeave makes the leaving member die (no drain, no final commit)
	// instead of leaving gracefully, so its uncommitted work is replayed.
	CrashLeave bool
}

// RebalanceFigures are Rebalance's own figures.
type RebalanceFigures struct {
	// Replays counts the records the leaving member had landed past its
	// last commit: its claims in the ledger at or past the committed
	// offsets read from the broker as it left (the other members hold their
	// effects back meanwhile, so they have committed nothing of its
	// partitions). The others re-read exactly these, so Report.Suppressed
	// must equal Replays (0 after a graceful leave). It is read from Redis
	// and the broker, not from the pipelines' counts.
	Replays     int64
	Assignments int // partition assignments over the run
	// OffsetDecreases counts committed offsets seen going backwards, in the
	// pipelines' commit events and in the broker's offsets polled during the
	// run; it must be 0.
	OffsetDecreases int
	// TotalsOK is set with the default sink only (a Ledger with the totals
	// effect): the totals hash equals the sums computed from the records.
	TotalsOK bool
}

// Rebalance runs members joining and leaving while records arrive: two
// consumers start on the first wave, a third joins during the second, and
// the first leaves during the third (gracefully, or as a crash with
// CrashLeave). Partitions move twice under load. Without Setup.Effect or
// Setup.Sink the consumers use a Ledger with the totals effect, and
// Rebalance.TotalsOK checks the sums. About 10-20 seconds on a local broker
// with the defaults.
func Rebalance(ctx context.Context, t testing.TB, s Setup, cfg RebalanceConfig) *Report {
	t.Helper()
	rn := s.start(ctx, t)
	if s.Effect == nil && s.Sink == nil {
		rn.env.NewSink = nil // the scenario's default: a Ledger with the totals effect
	}
	res, err := scenario.Rebalance(rn.ctx, rn.env, scenario.RebalanceConfig{Partitions: cfg.Partitions,
		Orders: cfg.Records, CommitEvery: cfg.CommitEvery, CrashLeave: cfg.CrashLeave})
	if err != nil {
		t.Fatalf("integration: rebalance scenario: %v", err)
	}
	r := rn.finish(t, "rebalance", res.Keys, res.Stats)
	r.Rebalance = &RebalanceFigures{Replays: res.Replays, Assignments: res.Assigned,
		OffsetDecreases: res.Decreases, TotalsOK: res.TotalsOK && s.Effect == nil && s.Sink == nil}
	return r
}
