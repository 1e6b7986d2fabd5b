// Package scenario holds the fault scenarios shardpipe is tested and demoed
// with, written once and run on any Kafka and Redis: kfake and miniredis in
// unit tests and the demo, the real servers in integration tests, and the
// user's own pipeline configuration and effect through the public
// integration kit.
package scenario

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

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
	// NewSink builds the Applier of one consumer (tag names it). Nil: each
	// scenario's default (a Ledger under Prefix; Rebalance adds the totals
	// effect).
	NewSink func(tag string) (pipeline.Applier, error)
	// Wrap, when set, wraps every consumer's Applier (the integration kit
	// counts applications with it).
	Wrap func(pipeline.Applier) pipeline.Applier
	// Options are applied to every pipeline after the scenario's defaults
	// (commit policy) and before what the scenario itself needs (its
	// observer, timeouts). Fault points (a crash, a stall) go with the
	// context of the consumer's Run (package internal/faults).
	Options []pipeline.GroupOpt
}

// Outcome is what every scenario reports besides its own figures.
type Outcome struct {
	Keys   []string                  // the business keys produced, once each
	Stats  []pipeline.PartitionStats // every consumer's partitions, in start order
	Events []watch.Tagged            // every consumer's events
}

// collect fills o from the consumers and the event log.
func (o *Outcome) collect(env Env, consumers ...*pipeline.Pipeline) {
	for _, p := range consumers {
		o.Stats = append(o.Stats, p.Stats()...)
	}
	o.Events = env.Log.Events()
}

// LedgerKey reports whether key, one of env.Prefix's, is a ledger entry:
// every key a scenario writes there is one, except Rebalance's totals hash
// and Poison's dead-letter markers.
func (env Env) LedgerKey(key string) bool {
	return key != env.totalsHash() && !strings.HasPrefix(key, env.Prefix+"dlq:")
}

// totalsHash is the hash Rebalance's default sink adds the order amounts to.
func (env Env) totalsHash() string { return env.Prefix + "totals" }

func (env Env) ledger() (pipeline.Applier, error) {
	return sink.NewLedger(env.Redis, sink.WithPrefix(env.Prefix))
}

// consumer builds one pipeline: defaults, then env.Options, then must.
func (env Env) consumer(tag string, defaultSink func() (pipeline.Applier, error), defaults []pipeline.GroupOpt,
	must ...pipeline.GroupOpt) (*pipeline.Pipeline, error) {
	build := defaultSink
	if env.NewSink != nil {
		build = func() (pipeline.Applier, error) { return env.NewSink(tag) }
	}
	a, err := build()
	if err != nil {
		return nil, fmt.Errorf("sink for consumer %s: %w", tag, err)
	}
	if env.Wrap != nil {
		a = env.Wrap(a)
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts := []pipeline.GroupOpt{
		pipeline.Brokers(env.Brokers...), pipeline.Topics(env.Topic), pipeline.Group(env.Group),
		pipeline.Sink(a), pipeline.GroupProtocol(env.Protocol), pipeline.Logger(logger.With("consumer", tag)),
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

// orders prepares env for a scenario: an event log when it has none, the
// topic with parts partitions, and perPart orders in each (ProduceOrders).
func (env *Env) orders(ctx context.Context, parts int32, perPart int) ([]string, error) {
	if env.Log == nil {
		env.Log = watch.New()
	}
	if err := CreateTopic(ctx, env.Brokers, env.Topic, parts); err != nil {
		return nil, err
	}
	return ProduceOrders(ctx, env.Brokers, env.Topic, parts, perPart)
}

// OrderKey is the business key of order i of partition n in ProduceOrders.
func OrderKey(n int32, i int) string { return fmt.Sprintf("order-%d-%04d", n, i) }

// ProduceOrders writes perPart orders to each of parts partitions, placed by
// explicit partition so each shard's count is exact, and returns their keys.
// Keys are unique order IDs (OrderKey); values are order JSON.
func ProduceOrders(ctx context.Context, brokers []string, topic string, parts int32, perPart int) ([]string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(topic))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	keys := make([]string, 0, int(parts)*perPart)
	for n := int32(0); n < parts; n++ {
		recs := make([]*kgo.Record, 0, perPart)
		for i := 0; i < perPart; i++ {
			id := OrderKey(n, i)
			v := fmt.Sprintf(`{"order_id":%q,"customer":"c%d","amount_cents":%d}`, id, i%7, 100+i)
			recs = append(recs, &kgo.Record{Partition: n, Key: []byte(id), Value: []byte(v)})
			keys = append(keys, id)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return nil, fmt.Errorf("produce to %s/%d: %w", topic, n, err)
		}
	}
	return keys, nil
}
