package integration

import (
	"context"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/scenario"
)

// ZombieConfig sizes Zombie. Zero fields take the defaults: 4 partitions of
// 100 records, a commit every 10, a 2 s revoke timeout for the stalled member.
type ZombieConfig struct {
	Partitions    int32
	PerPartition  int
	CommitEvery   int // Setup.Options may override it
	RevokeTimeout time.Duration
}

// ZombieFigures are Zombie's own figures.
type ZombieFigures struct {
	// Moved lists the partitions that moved from the stalled member to the
	// new one.
	Moved []checkpoint.Partition
	// Epoch is the zombie's generation (classic) or member epoch (KIP-848)
	// when it stalled.
	Epoch int32
	// The zombie's figures on the moved partitions after it woke: its stale
	// batches' attempts, the claims they wrote (ZombieApplied, must be 0:
	// pipeline.PartitionStats.Claimed, since a zombie never commits and so
	// never counts Applied), its suppressed effects, and its refused
	// commits (each wrapping checkpoint.ErrStaleEpoch).
	ZombieAttempts, ZombieApplied, ZombieSuppressed, ZombieFenced int64
	Refusals                                                      []error
	// BrokerRefusal is what shardpipe's commit path (a checkpoint.Kafka over
	// the zombie's client) returns for a commit of a moved partition that
	// carries the zombie's member ID and old epoch and passes the local
	// fence: the broker's answer, as franz-go hands it over (nil would mean
	// the broker accepted it).
	BrokerRefusal error
	// StaleEpochRetries lists franz-go's reports that the broker answered
	// such a commit with STALE_MEMBER_EPOCH (KIP-848 groups): franz-go then
	// retries with the member's new epoch, leaving out the partitions the
	// member no longer owns, and answers REBALANCE_IN_PROGRESS for those.
	StaleEpochRetries []StaleEpochRetry
}

// StaleEpochRetry is one franz-go report of an OffsetCommit answered with
// STALE_MEMBER_EPOCH: the epoch it carried, the epoch franz-go retried with,
// and how many partitions it dropped from the retry as no longer owned.
type StaleEpochRetry struct {
	OldEpoch, NewEpoch int32
	Dropped            int
}

// Zombie runs a zombie commit after the partition moved: member A stalls in
// the middle of a batch on every partition; member B joins and the
// partitions that move to B are revoked from A past its revoke deadline, so
// A is fenced for them; B processes them to the end. Then A wakes and
// finishes its stale batches: its effects must be suppressed and its commits
// refused, so B's committed offsets stay. A few seconds on a local broker.
func Zombie(ctx context.Context, t testing.TB, s Setup, cfg ZombieConfig) *Report {
	t.Helper()
	rn := s.start(ctx, t)
	res, err := scenario.Zombie(rn.ctx, rn.env, scenario.ZombieConfig(cfg))
	if err != nil {
		t.Fatalf("integration: zombie scenario: %v", err)
	}
	r := rn.finish(t, "zombie", res.Keys, res.Stats)
	r.Zombie = &ZombieFigures{Moved: res.Moved, Epoch: res.ZombieEpoch, ZombieAttempts: res.ZombieAttempts, ZombieApplied: res.ZombieApplied,
		ZombieSuppressed: res.ZombieSuppressed, ZombieFenced: res.ZombieFenced, Refusals: res.Refusals,
		BrokerRefusal: res.BrokerRefusal}
	for _, x := range res.StaleEpochRetries {
		r.Zombie.StaleEpochRetries = append(r.Zombie.StaleEpochRetries, StaleEpochRetry(x))
	}
	return r
}
