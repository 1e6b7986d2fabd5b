package scenario

import (
	"context"
	"fmt"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
)

// CrashConfig sizes the crash-between-effect-and-commit scenario. Zero
// fields take the seed chapter's values.
type CrashConfig struct {
	Partitions   int32 // default 4
	PerPartition int   // records per partition, default 250
	CommitEvery  int   // default 10; env.Options may override it
	Partition    int32 // the partition whose worker dies, default 0
	CrashAfter   int   // attempts before it dies, default 37
}

// Seed parameters: 4 partitions x 250 orders, commit every 10, partition 0's
// worker dies after 37 attempts.
const (
	SeedPartitions  = 4
	SeedPerPart     = 250
	SeedCommitEvery = 10
	SeedCrashAfter  = 37
)

func (c CrashConfig) withDefaults() CrashConfig {
	if c.Partitions == 0 {
		c.Partitions = SeedPartitions
	}
	if c.PerPartition == 0 {
		c.PerPartition = SeedPerPart
	}
	if c.CommitEvery == 0 {
		c.CommitEvery = SeedCommitEvery
	}
	if c.CrashAfter == 0 {
		c.CrashAfter = SeedCrashAfter
	}
	return c
}

// SeedResult is the seed chapter's test line, measured.
type SeedResult struct {
	Shard0        int   // records in the crashed partition
	CrashAttempts int64 // attempts of its first worker before it died
	Checkpoint    int64 // its committed offset at the crash
	Replay        int64 // its records the second consumer found already applied
	Applied       int64 // effects applied over both consumers
	Suppressed    int64 // effects suppressed over both consumers
	Outcome
}

// Line prints the result as the seed's test does.
func (r SeedResult) Line() string {
	return fmt.Sprintf("shard0=%d crash_attempts=%d checkpoint=%d replay=%d applied=%d suppressed=%d",
		r.Shard0, r.CrashAttempts, r.Checkpoint, r.Replay, r.Applied, r.Suppressed)
}

// SeedParity runs Crash with the seed chapter's numbers.
func SeedParity(ctx context.Context, env Env) (SeedResult, error) {
	return Crash(ctx, env, CrashConfig{})
}

// Crash runs the seed's crash-and-resume test on a consumer group: a first
// consumer processes every partition; one partition's worker dies between
// effect and commit after CrashAfter attempts (its landed effects stay, its
// offset stays at the last commit). A fresh consumer in the same group
// resumes that partition from the committed offset, and the records applied
// before the crash come again: the sink must suppress them.
func Crash(ctx context.Context, env Env, cfg CrashConfig) (SeedResult, error) {
	cfg = cfg.withDefaults()
	var res SeedResult
	keys, err := env.orders(ctx, cfg.Partitions, cfg.PerPartition)
	if err != nil {
		return res, err
	}
	res.Keys, res.Shard0 = keys, cfg.PerPartition
	end := int64(cfg.PerPartition)
	defaults := []pipeline.Option{pipeline.CommitEvery(cfg.CommitEvery), pipeline.CommitInterval(0)}

	crashed := checkpoint.Partition{Topic: env.Topic, Partition: cfg.Partition}
	first, err := env.consumer("first", env.ledger, defaults,
		pipeline.CrashAfter(env.Topic, cfg.Partition, cfg.CrashAfter))
	if err != nil {
		return res, err
	}
	done := runAsync(ctx, first)
	err = env.Log.Wait(ctx, fmt.Sprintf("the first consumer's crash on %s and full commits elsewhere", crashed),
		func(evs []watch.Tagged) bool {
			c := watch.Committed(evs, "first")
			for n := range cfg.Partitions {
				if p := (checkpoint.Partition{Topic: env.Topic, Partition: n}); p != crashed && c[p] != end {
					return false
				}
			}
			return watch.Has(evs, "first", pipeline.Crashed, crashed)
		})
	if cerr := closeAndWait(first, done); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	for _, s := range first.Stats() {
		if s.Partition == crashed {
			res.CrashAttempts, res.Checkpoint = s.Attempts, s.Committed
		}
	}

	second, err := env.consumer("second", env.ledger, defaults)
	if err != nil {
		return res, err
	}
	done = runAsync(ctx, second)
	err = env.Log.Wait(ctx, fmt.Sprintf("the second consumer to commit %s to its end", crashed),
		func(evs []watch.Tagged) bool { return watch.Committed(evs, "second")[crashed] == end })
	if cerr := closeAndWait(second, done); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	for _, s := range second.Stats() {
		if s.Partition == crashed {
			res.Replay = s.Suppressed
		}
	}
	res.collect(env, first, second)
	_, res.Applied, res.Suppressed, _, _ = pipeline.Totals(res.Stats)
	return res, nil
}
