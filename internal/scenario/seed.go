// Package scenario holds the fault scenarios shardpipe is tested and demoed
// with, written once and run on any Kafka and Redis: kfake and miniredis in
// unit tests and the demo, the real servers in integration tests.
package scenario

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// Env is where a scenario runs. Names must be fresh for every run.
type Env struct {
	Brokers  []string
	Redis    redis.UniversalClient
	Topic    string
	Group    string
	Prefix   string // ledger key prefix
	Protocol pipeline.Protocol
	Logger   *slog.Logger
	Log      *watch.Log // optional; a new one is made when nil
}

// SeedResult is the seed chapter's test line, measured.
type SeedResult struct {
	Shard0        int   // records in partition 0
	CrashAttempts int64 // attempts of partition 0's first worker before it died
	Checkpoint    int64 // partition 0's committed offset at the crash
	Replay        int64 // partition 0 records the second consumer found already applied
	Applied       int64 // effects applied over both consumers
	Suppressed    int64 // effects suppressed over both consumers
}

// Line prints the result as the seed's test does.
func (r SeedResult) Line() string {
	return fmt.Sprintf("shard0=%d crash_attempts=%d checkpoint=%d replay=%d applied=%d suppressed=%d",
		r.Shard0, r.CrashAttempts, r.Checkpoint, r.Replay, r.Applied, r.Suppressed)
}

// Seed parameters: 4 partitions x 250 orders, commit every 10, partition 0's
// worker dies after 37 attempts.
const (
	SeedPartitions  = 4
	SeedPerPart     = 250
	SeedCommitEvery = 10
	SeedCrashAfter  = 37
)

// SeedParity runs the seed's crash-and-resume test on a consumer group: a
// first consumer processes all four partitions, its partition 0 worker dies
// between effect and commit after 37 attempts; a fresh consumer in the same
// group resumes partition 0 from the committed offset, and the ledger
// suppresses the records applied before the crash.
func SeedParity(ctx context.Context, env Env) (SeedResult, error) {
	var res SeedResult
	if env.Log == nil {
		env.Log = watch.New()
	}
	if err := CreateTopic(ctx, env.Brokers, env.Topic, SeedPartitions); err != nil {
		return res, err
	}
	if err := ProduceOrders(ctx, env.Brokers, env.Topic, SeedPartitions, SeedPerPart); err != nil {
		return res, err
	}
	res.Shard0 = SeedPerPart

	p0 := checkpoint.Partition{Topic: env.Topic, Partition: 0}
	first, err := env.pipeline("first", pipeline.CrashAfter(env.Topic, 0, SeedCrashAfter))
	if err != nil {
		return res, err
	}
	done := runAsync(ctx, first)
	err = env.Log.Wait(ctx, "the first consumer's crash on partition 0 and full commits elsewhere", func(evs []watch.Tagged) bool {
		c := watch.Committed(evs, "first")
		for n := int32(1); n < SeedPartitions; n++ {
			if c[checkpoint.Partition{Topic: env.Topic, Partition: n}] != SeedPerPart {
				return false
			}
		}
		return watch.Has(evs, "first", pipeline.Crashed, p0)
	})
	if cerr := closeAndWait(first, done); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	for _, s := range first.Stats() {
		if s.Partition == p0 {
			res.CrashAttempts, res.Checkpoint = s.Attempts, s.Committed
		}
	}

	second, err := env.pipeline("second")
	if err != nil {
		return res, err
	}
	done = runAsync(ctx, second)
	err = env.Log.Wait(ctx, "the second consumer to commit partition 0 to its end", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "second")[p0] == SeedPerPart
	})
	if cerr := closeAndWait(second, done); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	for _, s := range second.Stats() {
		if s.Partition == p0 {
			res.Replay = s.Suppressed
		}
	}
	_, a1, s1, _, _ := pipeline.Totals(first.Stats())
	_, a2, s2, _, _ := pipeline.Totals(second.Stats())
	res.Applied, res.Suppressed = a1+a2, s1+s2
	return res, nil
}

func (env Env) pipeline(tag string, extra ...pipeline.Option) (*pipeline.Pipeline, error) {
	ledger, err := sink.NewLedger(env.Redis, sink.WithPrefix(env.Prefix))
	if err != nil {
		return nil, err
	}
	return env.newPipeline(tag, ledger, append([]pipeline.Option{pipeline.CommitEvery(SeedCommitEvery),
		pipeline.CommitInterval(0)}, extra...)...)
}

func (env Env) newPipeline(tag string, a pipeline.Applier, extra ...pipeline.Option) (*pipeline.Pipeline, error) {
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts := []pipeline.Option{
		pipeline.Brokers(env.Brokers...), pipeline.Topics(env.Topic), pipeline.Group(env.Group),
		pipeline.Sink(a), pipeline.GroupProtocol(env.Protocol),
		pipeline.Logger(logger.With("consumer", tag)), pipeline.Observe(env.Log.Observer(tag)),
	}
	return pipeline.New(append(opts, extra...)...)
}

func runAsync(ctx context.Context, p *pipeline.Pipeline) <-chan error {
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	return done
}

func closeAndWait(p *pipeline.Pipeline, done <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		return err
	}
	return <-done
}

// CreateTopic creates topic with n partitions (replication factor 1).
func CreateTopic(ctx context.Context, brokers []string, topic string, n int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, n, 1, nil, topic)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	if resp.Err != nil {
		return fmt.Errorf("create topic %s: %w", topic, resp.Err)
	}
	return nil
}

// ProduceOrders writes perPart orders to each of parts partitions, placed by
// explicit partition so each shard's count is exact. Keys are unique order
// IDs; values are order JSON.
func ProduceOrders(ctx context.Context, brokers []string, topic string, parts int32, perPart int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(topic))
	if err != nil {
		return err
	}
	defer cl.Close()
	for n := int32(0); n < parts; n++ {
		recs := make([]*kgo.Record, 0, perPart)
		for i := 0; i < perPart; i++ {
			id := fmt.Sprintf("order-%d-%04d", n, i)
			v := fmt.Sprintf(`{"order_id":%q,"customer":"c%d","amount_cents":%d}`, id, i%7, 100+i)
			recs = append(recs, &kgo.Record{Partition: n, Key: []byte(id), Value: []byte(v)})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("produce to %s/%d: %w", topic, n, err)
		}
	}
	return nil
}
