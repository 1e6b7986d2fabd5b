package scenario

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
)

// ReplayConfig sizes the replay scenario. Zero fields take the defaults.
type ReplayConfig struct {
	Partitions   int32 // default 4
	PerPartition int   // default 200
	CommitEvery  int   // default 50; env.Options may override it
	// From is the offset, in every partition, where the replay starts
	// (default 0: the whole topic).
	From int64
}

// ReplayResult is what the replay scenario measured.
type ReplayResult struct {
	ReplayGroup string // the group that replayed
	Replayed    int64  // records the replaying consumer attempted
	// ReplayApplied counts effects the replay applied: zero when every
	// effect had landed once already.
	ReplayApplied    int64
	ReplaySuppressed int64
	Applied          int64 // over both passes
	Suppressed       int64
	Outcome
}

func (c ReplayConfig) withDefaults() ReplayConfig {
	if c.Partitions == 0 {
		c.Partitions = 4
	}
	if c.PerPartition == 0 {
		c.PerPartition = 200
	}
	if c.CommitEvery == 0 {
		c.CommitEvery = 50
	}
	return c
}

// Replay processes a topic to its end, then replays the range from
// cfg.From to the end in a second group whose committed offsets were moved
// back to cfg.From (what `kafka-consumer-groups --reset-offsets` or
// `shardpipe reset-offsets` does to a stopped group). Every replayed record's
// effect had already landed, so the sink must suppress all of them.
func Replay(ctx context.Context, env Env, cfg ReplayConfig) (ReplayResult, error) {
	cfg = cfg.withDefaults()
	var res ReplayResult
	if cfg.From < 0 || cfg.From > int64(cfg.PerPartition) {
		return res, fmt.Errorf("replay from offset %d: want 0..%d", cfg.From, cfg.PerPartition)
	}
	keys, err := env.orders(ctx, cfg.Partitions, cfg.PerPartition)
	if err != nil {
		return res, err
	}
	res.Keys = keys
	end := int64(cfg.PerPartition)
	defaults := []pipeline.GroupOpt{pipeline.CommitEvery(cfg.CommitEvery), pipeline.CommitInterval(0)}
	allAt := func(tag string) func([]watch.Tagged) bool {
		return func(evs []watch.Tagged) bool {
			c := watch.Committed(evs, tag)
			for n := range cfg.Partitions {
				if c[checkpoint.Partition{Topic: env.Topic, Partition: n}] != end {
					return false
				}
			}
			return true
		}
	}

	first, err := env.consumer("first", env.ledger, defaults)
	if err != nil {
		return res, err
	}
	done := runAsync(ctx, first)
	err = env.Log.Wait(ctx, "the first pass to commit every partition to its end", allAt("first"))
	if cerr := closeAndWait(first, done); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}

	res.ReplayGroup = env.Group + "-replay"
	if err := resetGroup(ctx, env.Brokers, res.ReplayGroup, env.Topic, cfg.Partitions, cfg.From); err != nil {
		return res, err
	}
	renv := env
	renv.Group = res.ReplayGroup
	replay, err := renv.consumer("replay", env.ledger, defaults)
	if err != nil {
		return res, err
	}
	done = runAsync(ctx, replay)
	err = env.Log.Wait(ctx, "the replay to commit every partition to its end", allAt("replay"))
	if cerr := closeAndWait(replay, done); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	rt := pipeline.Totals(replay.Stats())
	res.Replayed, res.ReplayApplied, res.ReplaySuppressed = rt.Attempts, rt.Applied, rt.Suppressed
	res.collect(env, first, replay)
	tot := pipeline.Totals(res.Stats)
	res.Applied, res.Suppressed = tot.Applied, tot.Suppressed
	return res, nil
}

// resetGroup commits offset from on every partition of topic for a group
// that has no members.
func resetGroup(ctx context.Context, brokers []string, group, topic string, parts int32, from int64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	offs := kadm.Offsets{}
	for n := range parts {
		offs.Add(kadm.Offset{Topic: topic, Partition: n, At: from, LeaderEpoch: -1})
	}
	resp, err := kadm.NewClient(cl).CommitOffsets(ctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("set %s's offsets on %s to %d: %w", group, topic, from, err)
	}
	return nil
}
