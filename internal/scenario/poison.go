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

// PoisonConfig sizes the poison scenario. Zero fields take the defaults.
type PoisonConfig struct {
	Partitions   int32 // default 4
	PerPartition int   // records per partition, default 100
	// Every makes every Every-th record of each partition poison: no key
	// and a value that is not JSON (default 10).
	Every int
	// CrashAfter is when partition 0's first worker dies, after its effects
	// and dead-letter writes and before their commit (default 25).
	CrashAfter int
	// CommitEvery is the scenario's commit policy (default 50: partition
	// 0 dies before its first commit); env.Options may override it.
	CommitEvery int
}

// PoisonResult is what the poison scenario measured.
type PoisonResult struct {
	DLQTopic string
	// Poison lists the poison records produced; DLQ counts the dead-letter
	// records found per source record (each must be 1), and Stray those
	// naming no poison record.
	Poison            []checkpoint.Partition // Topic/Partition with the offset in Offsets
	Offsets           []int64
	DLQ               map[string]int // "partition/offset" -> records in the DLQ
	Stray             int
	DeadLettered      int64 // dead-letter writes the pipelines counted
	DeadLetterReplays int64 // poison records found already dead-lettered on a replay
	Outcome
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

// PoisonSource names a source record in PoisonResult.DLQ.
func PoisonSource(partition int32, offset int64) string {
	return strconv.Itoa(int(partition)) + "/" + strconv.FormatInt(offset, 10)
}

// Poison runs poison records through a crash: every Every-th record cannot
// be decoded; each must be retried, written to the dead-letter topic
// (<topic>.dlq) and committed past, so no partition stalls. Partition 0's
// first worker dies after dead-lettering some and before committing them; a
// second consumer resumes, and the dead-letter topic must still hold each
// poison record exactly once.
func Poison(ctx context.Context, env Env, cfg PoisonConfig) (PoisonResult, error) {
	cfg = cfg.withDefaults()
	res := PoisonResult{DLQTopic: env.Topic + ".dlq", DLQ: map[string]int{}}
	if env.Log == nil {
		env.Log = watch.New()
	}
	for _, t := range []string{env.Topic, res.DLQTopic} {
		if err := CreateTopic(ctx, env.Brokers, t, cfg.Partitions); err != nil {
			return res, err
		}
	}
	if err := res.produce(ctx, env, cfg); err != nil {
		return res, err
	}
	end := int64(cfg.PerPartition)
	defaults := []pipeline.GroupOpt{pipeline.CommitEvery(cfg.CommitEvery), pipeline.CommitInterval(0),
		pipeline.PoisonAttempts(2)}
	dlq := pipeline.DeadLetters(env.Redis, env.Prefix, pipeline.DeadLetterTo(res.DLQTopic))
	p0 := checkpoint.Partition{Topic: env.Topic, Partition: 0}

	first, err := env.consumer("first", env.ledger, defaults, dlq)
	if err != nil {
		return res, err
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
		return res, err
	}
	second, err := env.consumer("second", env.ledger, defaults, dlq)
	if err != nil {
		return res, err
	}
	done = runAsync(ctx, second)
	err = env.Log.Wait(ctx, "the second consumer to commit partition 0 to its end", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "second")[p0] == end
	})
	if cerr := closeAndWait(second, done); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	res.collect(env, first, second)
	for _, s := range res.Stats {
		res.DeadLettered += s.DeadLettered
		res.DeadLetterReplays += s.DeadLetterReplays
	}
	return res, res.readDLQ(ctx, env)
}

// produce writes the orders and the poison records, partition by partition,
// so a record's offset is its index.
func (res *PoisonResult) produce(ctx context.Context, env Env, cfg PoisonConfig) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(env.Topic))
	if err != nil {
		return err
	}
	defer cl.Close()
	for n := range cfg.Partitions {
		recs := make([]*kgo.Record, 0, cfg.PerPartition)
		for i := 0; i < cfg.PerPartition; i++ {
			if (i+1)%cfg.Every == 0 {
				recs = append(recs, &kgo.Record{Partition: n, Value: []byte("not an order {")})
				res.Poison = append(res.Poison, checkpoint.Partition{Topic: env.Topic, Partition: n})
				res.Offsets = append(res.Offsets, int64(i))
				continue
			}
			id := OrderKey(n, i)
			v := fmt.Sprintf(`{"order_id":%q,"customer":"c%d","amount_cents":%d}`, id, i%7, 100+i)
			recs = append(recs, &kgo.Record{Partition: n, Key: []byte(id), Value: []byte(v)})
			res.Keys = append(res.Keys, id)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("produce to %s/%d: %w", env.Topic, n, err)
		}
	}
	return nil
}

// readDLQ reads the dead-letter topic to its end and counts its records per
// source record, by their source headers.
func (res *PoisonResult) readDLQ(ctx context.Context, env Env) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.ConsumeTopics(res.DLQTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
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
