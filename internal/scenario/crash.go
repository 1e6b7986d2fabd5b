package scenario

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults"
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
	// Checkpoint is the crashed partition's committed offset after the
	// crash, read from the broker before the second consumer starts.
	Checkpoint int64
	// Replay counts the crashed partition's records at or past Checkpoint
	// whose keys the ledger in Redis held before the second consumer
	// started: the landed records it re-reads, which it must suppress. It
	// is computed from the broker and Redis, not from the pipelines' counts.
	Replay     int64
	Applied    int64 // effects applied over both consumers
	Suppressed int64 // effects suppressed over both consumers
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
	defaults := []pipeline.GroupOpt{pipeline.CommitEvery(cfg.CommitEvery), pipeline.CommitInterval(0)}

	crashed := checkpoint.Partition{Topic: env.Topic, Partition: cfg.Partition}
	first, err := env.consumer("first", env.ledger, defaults)
	if err != nil {
		return res, err
	}
	done := runAsync(faults.WithWorker(ctx, faults.CrashAfter(env.Topic, cfg.Partition, cfg.CrashAfter,
		env.Log.Crashes("first"))), first)
	err = env.Log.Wait(ctx, fmt.Sprintf("the first consumer's crash on %s and full commits elsewhere", crashed),
		func(evs []watch.Tagged) bool {
			c := watch.Committed(evs, "first")
			for n := range cfg.Partitions {
				if p := (checkpoint.Partition{Topic: env.Topic, Partition: n}); p != crashed && c[p] != end {
					return false
				}
			}
			return watch.HasCrash(evs, "first", crashed)
		})
	if cerr := closeAndWait(first, done); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	for _, s := range first.Stats() {
		if s.Partition == crashed {
			res.CrashAttempts = s.Attempts
		}
	}
	if res.Checkpoint, res.Replay, err = landedPastCommit(ctx, env, crashed, cfg.PerPartition); err != nil {
		return res, err
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
	res.collect(env, first, second)
	tot := pipeline.Totals(res.Stats)
	res.Applied, res.Suppressed = tot.Applied, tot.Suppressed
	return res, nil
}

// landedPastCommit reads p's committed offset from the broker and counts the
// orders of p at or past it (ProduceOrders' keys) whose ledger keys exist in
// Redis: what the next owner re-reads although its effect landed.
func landedPastCommit(ctx context.Context, env Env, p checkpoint.Partition, perPart int) (committedAt, landed int64, err error) {
	c, err := committed(ctx, env, []checkpoint.Partition{p})
	if err != nil {
		return 0, 0, err
	}
	committedAt = max(c[p], 0)
	var keys []string
	for i := int(committedAt); i < perPart; i++ {
		keys = append(keys, env.Prefix+OrderKey(p.Partition, i))
	}
	if len(keys) == 0 {
		return committedAt, 0, nil
	}
	cmds := make([]*redis.IntCmd, len(keys))
	if _, err := env.Redis.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = pl.Exists(ctx, k)
		}
		return nil
	}); err != nil {
		return 0, 0, fmt.Errorf("read the ledger keys of %s past offset %d: %w", p, committedAt, err)
	}
	for _, c := range cmds {
		landed += c.Val()
	}
	return committedAt, landed, nil
}
