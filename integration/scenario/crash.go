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

// CrashConfig sizes CrashBeforeCommit. Zero fields take the seed chapter's
// values: 4 partitions of 250 records, a commit every 10 records, partition
// 0's worker dies after 37 attempts.
type CrashConfig struct {
	Partitions   int32 // partitions of the topic, default 4
	PerPartition int   // records per partition, default 250
	// CommitEvery is the scenario's commit policy in records (default 10;
	// no time-based commits); Setup.Options may override it.
	CommitEvery int
	Partition   int32 // the partition whose worker dies, default 0
	CrashAfter  int   // records that worker attempts before it dies, default 37
}

// Seed parameters: 4 partitions x 250 orders, commit every 10, partition 0's
// worker dies after 37 attempts.
const (
	SeedPartitions  = 4   // CrashConfig.Partitions' default
	SeedPerPart     = 250 // CrashConfig.PerPartition's default
	SeedCommitEvery = 10  // CrashConfig.CommitEvery's default
	SeedCrashAfter  = 37  // CrashConfig.CrashAfter's default
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

// CrashFigures are CrashBeforeCommit's own figures: with Report.Applied
// and Report.Suppressed, the seed chapter's test line (Report.Line).
type CrashFigures struct {
	// Shard0 is the number of records in the crashed partition
	// (CrashConfig.PerPartition).
	Shard0 int
	// CrashAttempts is the crashed worker's attempts before it died (its
	// effects landed).
	CrashAttempts int64
	// Checkpoint is the crashed partition's committed offset after the
	// crash, read from the broker before the second consumer starts.
	Checkpoint int64
	// Replayed counts the crashed partition's records at or past Checkpoint
	// whose ledger keys Redis held when the resuming consumer started: the
	// landed records it re-reads, which it must suppress. It is read from
	// the broker and Redis, not from the pipelines' counts, so
	// Report.Suppressed must equal it.
	Replayed int64
}

// CrashBeforeCommit runs the crash between effect and commit (the seed
// chapter's test, any size and crash point): a consumer applies every
// partition, but one partition's worker dies after CrashAfter attempts,
// after their effects landed and before their offsets were committed (it
// never commits again). A second consumer in the same group resumes that
// partition from its last commit, so the records between the commit and the
// crash come again. With a working ledger they are suppressed and each key's
// effect lands once; Report.Crash.Replayed says how many came again. A few
// seconds on a local broker.
func CrashBeforeCommit(ctx context.Context, s Setup, cfg CrashConfig) (*Report, error) {
	env, ctx, stop, err := start(ctx, s, "crash")
	if err != nil {
		return nil, err
	}
	defer stop()
	cfg = cfg.withDefaults()
	res := CrashFigures{Shard0: cfg.PerPartition}
	keys, err := env.orders(ctx, cfg.Partitions, cfg.PerPartition)
	if err != nil {
		return nil, err
	}
	end := int64(cfg.PerPartition)
	defaults := []pipeline.GroupOpt{pipeline.CommitEvery(cfg.CommitEvery), pipeline.CommitInterval(0)}

	crashed := checkpoint.Partition{Topic: env.Topic, Partition: cfg.Partition}
	first, err := env.consumer("first", env.ledger, defaults)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	for _, s := range first.Stats() {
		if s.Partition == crashed {
			res.CrashAttempts = s.Attempts
		}
	}
	if res.Checkpoint, res.Replayed, err = landedPastCommit(ctx, env, crashed, cfg.PerPartition); err != nil {
		return nil, err
	}

	second, err := env.consumer("second", env.ledger, defaults)
	if err != nil {
		return nil, err
	}
	done = runAsync(ctx, second)
	err = env.Log.Wait(ctx, fmt.Sprintf("the second consumer to commit %s to its end", crashed),
		func(evs []watch.Tagged) bool { return watch.Committed(evs, "second")[crashed] == end })
	if cerr := closeAndWait(second, done); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	r, err := env.finish(ctx, "crash before commit", keys, append(first.Stats(), second.Stats()...))
	if err != nil {
		return nil, err
	}
	r.Crash = &res
	return r, nil
}

// landedPastCommit reads p's committed offset from the broker and counts the
// orders of p at or past it (ProduceOrders' keys) whose ledger keys exist in
// Redis: what the next owner re-reads although its effect landed.
func landedPastCommit(ctx context.Context, env runEnv, p checkpoint.Partition, perPart int) (committedAt, landed int64, err error) {
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
