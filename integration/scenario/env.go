package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/orders"
	"github.com/shardpipe/shardpipe/internal/topics"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// runEnv is one scenario run: its Setup with names and defaults filled, a
// Redis client, the event log of its consumers and the counters of what
// they applied.
type runEnv struct {
	Setup
	Redis redis.UniversalClient
	Log   *watch.Log
	// NewSink builds the Applier of one consumer (tag names it). Nil: each
	// scenario's default (a Ledger under Prefix; Rebalance adds the totals
	// effect).
	NewSink func(tag string) (pipeline.Applier, error)
	// Wrap, when set, wraps every consumer's Applier after the counting
	// wrapper (Rebalance's gates).
	Wrap    func(pipeline.Applier) pipeline.Applier
	kopts   []kgo.Opt // Setup.Kafka's options
	counts  *counter
	effects *counter // nil without Setup.Effect
}

// start checks s and makes the run's environment: names, a Redis client
// (PING checked), the sink factory and the counters. The context it returns
// is bounded by s.Timeout; stop releases both.
func start(ctx context.Context, s Setup, kind string) (runEnv, context.Context, func(), error) {
	s, err := s.withDefaults(kind)
	if err != nil {
		return runEnv{}, nil, nil, err
	}
	kopts, err := s.Kafka.Opts()
	if err != nil {
		return runEnv{}, nil, nil, fmt.Errorf("scenario: Setup.Kafka: %w", err)
	}
	ropts := &redis.UniversalOptions{Addrs: []string{s.Redis}}
	if err := s.RedisSecurity.ApplyUniversal(ropts); err != nil {
		return runEnv{}, nil, nil, fmt.Errorf("scenario: Setup.RedisSecurity: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	rdb := redis.NewUniversalClient(ropts)
	stop := func() { cancel(); _ = rdb.Close() }
	if err := rdb.Ping(ctx).Err(); err != nil {
		stop()
		return runEnv{}, nil, nil, fmt.Errorf("redis PING %s: %w", s.Redis, err)
	}
	e := runEnv{Setup: s, Redis: rdb, Log: watch.New(), counts: newCounter(), kopts: kopts}
	switch {
	case s.Sink != nil:
		e.NewSink = func(string) (pipeline.Applier, error) { return s.Sink(rdb, s.Prefix) }
	case s.Effect != nil:
		e.effects = newCounter()
		effect := countingEffect(s.Effect, e.effects)
		e.NewSink = func(string) (pipeline.Applier, error) {
			g, err := sink.NewGuard(rdb, append([]sink.GuardOpt{sink.WithPrefix(s.Prefix)}, s.GuardOptions...)...)
			if err != nil {
				return nil, err
			}
			return pipeline.Guarded(g, effect), nil
		}
	}
	return e, ctx, stop, nil
}

// LedgerKey reports whether key, one of env.Prefix's, is a ledger entry:
// every key a scenario writes there is one, except Rebalance's totals hash
// and Poison's dead-letter markers.
func (env runEnv) LedgerKey(key string) bool {
	return key != env.totalsHash() && !strings.HasPrefix(key, env.Prefix+"dlq:")
}

// totalsHash is the hash Rebalance's default sink adds the order amounts to.
func (env runEnv) totalsHash() string { return env.Prefix + "totals" }

func (env runEnv) ledger() (pipeline.Applier, error) {
	return sink.NewLedger(env.Redis, sink.WithPrefix(env.Prefix))
}

// consumer builds one pipeline: defaults, then env.Options, then must. Its
// Applier is counted (Report.Applications), then wrapped by env.Wrap.
func (env runEnv) consumer(tag string, defaultSink func() (pipeline.Applier, error), defaults []pipeline.GroupOpt,
	must ...pipeline.GroupOpt) (*pipeline.Pipeline, error) {
	build := defaultSink
	if env.NewSink != nil {
		build = func() (pipeline.Applier, error) { return env.NewSink(tag) }
	}
	a, err := build()
	if err != nil {
		return nil, fmt.Errorf("sink for consumer %s: %w", tag, err)
	}
	a = countingApplier{a, env.counts}
	if env.Wrap != nil {
		a = env.Wrap(a)
	}
	opts := []pipeline.GroupOpt{
		pipeline.Brokers(env.Brokers...), pipeline.KafkaOptions(env.kopts...), pipeline.Topics(env.Topic), pipeline.Group(env.Group),
		pipeline.Sink(a), pipeline.GroupProtocol(env.Protocol), pipeline.Logger(env.Logger.With("consumer", tag)),
	}
	opts = append(append(append(opts, defaults...), env.Options...), must...)
	return pipeline.New(append(opts, pipeline.Observe(env.Log.Observer(tag)))...)
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

// createTopic creates topic with n partitions (replication factor 1) and
// waits for their leaders.
func createTopic(ctx context.Context, brokers []string, topic string, n int32, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...), kgo.SeedBrokers(brokers...))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = topics.Create(ctx, kadm.NewClient(cl), topics.Spec{Name: topic, Partitions: n})
	return err
}

// orders prepares env for a scenario: the topic with parts partitions, and
// perPart orders in each (ProduceOrders).
func (env runEnv) orders(ctx context.Context, parts int32, perPart int) ([]string, error) {
	if err := createTopic(ctx, env.Brokers, env.Topic, parts, env.kopts...); err != nil {
		return nil, err
	}
	return ProduceOrders(ctx, env.Brokers, env.Topic, parts, perPart, env.kopts...)
}

// OrderKey is the business key (and record key) of order i of partition n
// in ProduceOrders: "order-<n>-<i, four digits at least>".
func OrderKey(n int32, i int) string { return fmt.Sprintf("order-%d-%04d", n, i) }

// order is order i of partition n as the scenarios write it.
func order(n int32, i int) orders.Order {
	return orders.Order{OrderID: OrderKey(n, i), Customer: fmt.Sprintf("c%d", i%7), AmountCents: int64(100 + i)}
}

// ProduceOrders writes perPart orders to each of partitions 0..parts-1 of
// topic, placed by explicit partition so each partition's count is exact
// and order i of a partition is at offset i of an empty topic, and returns
// their keys in that order. Keys are unique order IDs (OrderKey); values
// are order JSON with customer c0..c6 and amount_cents 100+i. It costs one
// synchronous produce per partition.
func ProduceOrders(ctx context.Context, brokers []string, topic string, parts int32, perPart int, opts ...kgo.Opt) ([]string, error) {
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...), kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	keys := make([]string, 0, int(parts)*perPart)
	for n := int32(0); n < parts; n++ {
		recs := make([]*kgo.Record, 0, perPart)
		for i := 0; i < perPart; i++ {
			o := order(n, i)
			recs = append(recs, &kgo.Record{Partition: n, Key: []byte(o.OrderID), Value: o.JSON()})
			keys = append(keys, o.OrderID)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return nil, fmt.Errorf("produce to %s/%d: %w", topic, n, err)
		}
	}
	return keys, nil
}
