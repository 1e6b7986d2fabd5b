package scenario

import (
	"context"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
)

// PoisonConfig sizes Poison. Zero fields take the defaults: 4 partitions of
// 100 records, every 10th poison, partition 0's first worker dying after 25
// records, before its first commit (a commit every 50).
type PoisonConfig struct {
	Partitions   int32 // partitions of the topic (and of its dead-letter topic), default 4
	PerPartition int   // records per partition, poison ones included; default 100
	// Every makes every Every-th record of each partition poison: no key
	// and a value that is not JSON (default 10).
	Every int
	// CrashAfter is when partition 0's first worker dies, in records
	// attempted, after their effects and dead-letter writes and before
	// their commit (default 25).
	CrashAfter int
	// CommitEvery is the scenario's commit policy in records (default 50:
	// partition 0 dies before its first commit; no time-based commits);
	// Setup.Options may override it.
	CommitEvery int
}

// PoisonFigures are Poison's own figures, read from the dead-letter topic.
type PoisonFigures struct {
	// DLQTopic is the dead-letter topic: Setup.Topic + ".dlq".
	DLQTopic string
	// Poison names each poison record produced as "partition/offset", in
	// the order produced.
	Poison []string
	// DLQ counts the dead-letter records found per source record, keyed as
	// Poison names them (each must be 1).
	DLQ map[string]int
	// Stray counts the dead-letter records naming another topic as their
	// source (must be 0).
	Stray int
	// DeadLetterReplays counts poison records a consumer found already
	// dead-lettered (after the crash) and did not write again.
	DeadLetterReplays int64
}

func (c PoisonConfig) withDefaults() PoisonConfig {
	if c.Partitions == 0 {
		c.Partitions = 4
	}
	if c.PerPartition == 0 {
		c.PerPartition = 100
	}
	if c.Every == 0 {
		c.Every = 10
	}
	if c.CrashAfter == 0 {
		c.CrashAfter = 25
	}
	if c.CommitEvery == 0 {
		c.CommitEvery = 50
	}
	return c
}

// poisonSource names a source record in PoisonFigures.Poison and DLQ.
func poisonSource(partition int32, offset int64) string {
	return strconv.Itoa(int(partition)) + "/" + strconv.FormatInt(offset, 10)
}

// Poison runs poison records through a crash: every Every-th record has no
// business key and a value that is not JSON. Each must be retried (twice),
// written to the dead-letter topic Setup.Topic+".dlq" (which the scenario
// creates) and committed past, so no partition stalls; partition 0's first
// worker dies after dead-lettering some and before committing them, and a
// second consumer resumes. Report.ExactlyOnce then also requires each
// poison record in the dead-letter topic exactly once. A few seconds on a
// local broker.
func Poison(ctx context.Context, s Setup, cfg PoisonConfig) (*Report, error) {
	env, ctx, stop, err := start(ctx, s, "poison")
	if err != nil {
		return nil, err
	}
	defer stop()
	cfg = cfg.withDefaults()
	res := PoisonFigures{DLQTopic: env.Topic + ".dlq", DLQ: map[string]int{}}
	for _, t := range []string{env.Topic, res.DLQTopic} {
		if err := createTopic(ctx, env.Brokers, t, cfg.Partitions, env.kopts...); err != nil {
			return nil, err
		}
	}
	keys, err := res.produce(ctx, env, cfg)
	if err != nil {
		return nil, err
	}
	end := int64(cfg.PerPartition)
	defaults := []pipeline.GroupOpt{pipeline.CommitEvery(cfg.CommitEvery), pipeline.CommitInterval(0),
		pipeline.PoisonAttempts(2)}
	dlq := pipeline.DeadLetters(env.Redis, env.Prefix, pipeline.DeadLetterTo(res.DLQTopic))
	p0 := checkpoint.Partition{Topic: env.Topic, Partition: 0}

	first, err := env.consumer("first", env.ledger, defaults, dlq)
	if err != nil {
		return nil, err
	}
	done := runAsync(faults.WithWorker(ctx, faults.CrashAfter(env.Topic, 0, cfg.CrashAfter, env.Log.Crashes("first"))), first)
	err = env.Log.Wait(ctx, "the first consumer's crash on partition 0 and full commits elsewhere", func(evs []watch.Tagged) bool {
		c := watch.Committed(evs, "first")
		for n := int32(1); n < cfg.Partitions; n++ {
			if c[checkpoint.Partition{Topic: env.Topic, Partition: n}] != end {
				return false
			}
		}
		return watch.HasCrash(evs, "first", p0)
	})
	if cerr := closeAndWait(first, done); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	second, err := env.consumer("second", env.ledger, defaults, dlq)
	if err != nil {
		return nil, err
	}
	done = runAsync(ctx, second)
	err = env.Log.Wait(ctx, "the second consumer to commit partition 0 to its end", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "second")[p0] == end
	})
	if cerr := closeAndWait(second, done); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	r, err := env.finish(ctx, "poison", keys, append(first.Stats(), second.Stats()...))
	if err != nil {
		return nil, err
	}
	for _, s := range r.Stats {
		res.DeadLetterReplays += s.DeadLetterReplays
	}
	if err := res.readDLQ(ctx, env); err != nil {
		return nil, err
	}
	r.Poison = &res
	return r, nil
}

// produce writes the orders and the poison records, partition by partition,
// so a record's offset is its index, and returns the orders' keys.
func (res *PoisonFigures) produce(ctx context.Context, env runEnv, cfg PoisonConfig) ([]string, error) {
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, env.kopts...), kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(env.Topic))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var keys []string
	for n := range cfg.Partitions {
		recs := make([]*kgo.Record, 0, cfg.PerPartition)
		for i := 0; i < cfg.PerPartition; i++ {
			if (i+1)%cfg.Every == 0 {
				recs = append(recs, &kgo.Record{Partition: n, Value: []byte("not an order {")})
				res.Poison = append(res.Poison, poisonSource(n, int64(i)))
				continue
			}
			o := order(n, i)
			recs = append(recs, &kgo.Record{Partition: n, Key: []byte(o.OrderID), Value: o.JSON()})
			keys = append(keys, o.OrderID)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return nil, fmt.Errorf("produce to %s/%d: %w", env.Topic, n, err)
		}
	}
	return keys, nil
}

// readDLQ reads the dead-letter topic to its end and counts its records per
// source record, by their source headers.
func (res *PoisonFigures) readDLQ(ctx context.Context, env runEnv) error {
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, env.kopts...), kgo.SeedBrokers(env.Brokers...), kgo.ConsumeTopics(res.DLQTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, res.DLQTopic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("end offsets of %s: %w", res.DLQTopic, err)
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("read %s: %w", res.DLQTopic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			h := map[string]string{}
			for _, x := range r.Headers {
				h[x.Key] = string(x.Value)
			}
			if h[pipeline.HeaderSourceTopic] == env.Topic {
				res.DLQ[h[pipeline.HeaderSourcePartition]+"/"+h[pipeline.HeaderSourceOffset]]++
			} else {
				res.Stray++
			}
			if r.Offset+1 >= left[r.Partition] {
				delete(left, r.Partition)
			}
		})
	}
	return nil
}
