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

// ReplayConfig sizes Replay. Zero fields take the defaults: 4 partitions of
// 200 records, a commit every 50, the replay from offset 0.
type ReplayConfig struct {
	Partitions   int32 // partitions of the topic, default 4
	PerPartition int   // records per partition, default 200
	// CommitEvery is the scenario's commit policy in records (default 50;
	// no time-based commits); Setup.Options may override it.
	CommitEvery int
	// From is the offset, in every partition, where the replay starts
	// (default 0: the whole topic); at most PerPartition.
	From int64
}

// ReplayFigures are Replay's own figures.
type ReplayFigures struct {
	Group    string // the group that replayed: Setup.Group + "-replay"
	Replayed int64  // records the replaying consumer attempted
	// Applied counts the effects the replay applied: 0 with a working
	// ledger, since every effect had landed once already.
	Applied int64
	// Suppressed counts the effects the replay suppressed: all of Replayed
	// with a working ledger.
	Suppressed int64
	// Committed is the replay group's committed offset per partition, read
	// from the broker at the end.
	Committed map[checkpoint.Partition]int64
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

// Replay runs a replay of a range: the topic is processed to its end, then
// a second group whose committed offsets were moved back to cfg.From (what
// `kafka-consumer-groups --reset-offsets` or `shardpipe reset-offsets` does
// to a stopped group, as an operator does to recover) processes the range
// again over the same ledger. Every replayed record's effect had already
// landed, so the sink must suppress all of them. A few seconds on a local
// broker.
func Replay(ctx context.Context, s Setup, cfg ReplayConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	if cfg.From < 0 || cfg.From > int64(cfg.PerPartition) {
		return nil, fmt.Errorf("replay from offset %d: want 0..%d", cfg.From, cfg.PerPartition)
	}
	env, ctx, stop, err := start(ctx, s, "replay")
	if err != nil {
		return nil, err
	}
	defer stop()
	var res ReplayFigures
	keys, err := env.orders(ctx, cfg.Partitions, cfg.PerPartition)
	if err != nil {
		return nil, err
	}
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
		return nil, err
	}
	done := runAsync(ctx, first)
	err = env.Log.Wait(ctx, "the first pass to commit every partition to its end", allAt("first"))
	if cerr := closeAndWait(first, done); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}

	res.Group = env.Group + "-replay"
	if err := resetGroup(ctx, env.Brokers, res.Group, env.Topic, cfg.Partitions, cfg.From, env.kopts...); err != nil {
		return nil, err
	}
	renv := env
	renv.Group = res.Group
	replay, err := renv.consumer("replay", env.ledger, defaults)
	if err != nil {
		return nil, err
	}
	done = runAsync(ctx, replay)
	err = env.Log.Wait(ctx, "the replay to commit every partition to its end", allAt("replay"))
	if cerr := closeAndWait(replay, done); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	rt := pipeline.Totals(replay.Stats())
	res.Replayed, res.Applied, res.Suppressed = rt.Attempts, rt.Applied, rt.Suppressed
	r, err := env.finish(ctx, "replay", keys, append(first.Stats(), replay.Stats()...))
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, env.kopts...), kgo.SeedBrokers(env.Brokers...))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if res.Committed, _, err = offsets(ctx, kadm.NewClient(cl), res.Group, env.Topic); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	r.Replay = &res
	return r, nil
}

// resetGroup commits offset from on every partition of topic for a group
// that has no members.
func resetGroup(ctx context.Context, brokers []string, group, topic string, parts int32, from int64, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...), kgo.SeedBrokers(brokers...))...)
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
