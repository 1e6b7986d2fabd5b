package integration

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/internal/scenario"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// Setup is the pipeline under test: where it runs, how it is configured and
// what it does per record. A scenario starts several pipelines from it (a
// consumer that crashes and one that resumes, members that join and leave),
// each with its own Applier built from the fields below.
//
// The records a scenario produces are orders: the record key is the order
// ID, which is also the business key, and the value is JSON such as
// {"order_id":"order-0-0007","customer":"c0","amount_cents":107}.
type Setup struct {
	// Brokers and Redis locate the servers, usually Kafka(t) and Redis(t).
	Brokers []string
	Redis   string
	// Protocol is the consumer group protocol (pipeline.Classic or
	// pipeline.Consumer, KIP-848).
	Protocol pipeline.Protocol
	// Options configure every pipeline after the scenario's own commit
	// policy (so your CommitEvery, CommitInterval, MaxBatch, timeouts and
	// Kafka options apply). The scenario sets brokers, topic, group, sink,
	// logger and observer itself, and adds what it needs last (a crash point,
	// a stall hook).
	Options []pipeline.Option
	// Effect is your per-record handler. When set, each consumer applies
	// records through a sink.Guard (claim, effect, done) made with
	// GuardOptions, and the report counts Effect's successful calls per
	// business key.
	Effect       pipeline.ExternalEffect
	GuardOptions []sink.Option
	// Sink, when set, builds each consumer's Applier instead (for example a
	// Ledger with your sink.Effect, or, to prove a scenario bites, an Applier
	// with no ledger at all). prefix is the scenario's fresh key prefix: keep
	// the ledger under it, since Report.ExactlyOnce reads it back from there.
	// With neither Effect nor Sink, consumers use a sink.Ledger (record mode).
	Sink func(rdb redis.UniversalClient, prefix string) (pipeline.Applier, error)
	// Logger receives the pipelines' logs (default: discarded).
	Logger *slog.Logger
	// Timeout bounds the whole scenario (default 3 minutes).
	Timeout time.Duration
}

// run holds one scenario run's environment and counters.
type run struct {
	env     scenario.Env
	ctx     context.Context
	cancel  context.CancelFunc
	counts  *counter
	effects *counter // nil without Setup.Effect
}

// start makes the scenario environment: fresh names, a Redis client, the
// sink factory and the counting wrapper. Everything is cleaned up with t.
func (s Setup) start(ctx context.Context, t testing.TB) *run {
	t.Helper()
	if len(s.Brokers) == 0 || s.Redis == "" {
		t.Fatal("integration: Setup needs Brokers and Redis (integration.Kafka(t), integration.Redis(t))")
	}
	if s.Effect != nil && s.Sink != nil {
		t.Fatal("integration: Setup takes Effect or Sink, not both")
	}
	rdb := NewRedisClient(t, s.Redis)
	r := &run{counts: newCounter()}
	topic := Topic(t)
	t.Cleanup(func() { deleteTopic(t, s.Brokers, topic) })
	r.env = scenario.Env{Brokers: s.Brokers, Redis: rdb, Topic: topic, Group: Group(t),
		Prefix: RedisPrefix(t, rdb), Protocol: s.Protocol, Logger: s.Logger, Options: s.Options}
	r.env.Wrap = func(a pipeline.Applier) pipeline.Applier { return countingApplier{a, r.counts} }
	switch {
	case s.Sink != nil:
		r.env.NewSink = func(string) (pipeline.Applier, error) { return s.Sink(rdb, r.env.Prefix) }
	case s.Effect != nil:
		r.effects = newCounter()
		effect := countingEffect(s.Effect, r.effects)
		r.env.NewSink = func(string) (pipeline.Applier, error) {
			g, err := sink.NewGuard(rdb, append([]sink.Option{sink.WithPrefix(r.env.Prefix)}, s.GuardOptions...)...)
			if err != nil {
				return nil, err
			}
			return pipeline.Guarded(g, effect), nil
		}
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Minute
	}
	r.ctx, r.cancel = context.WithTimeout(ctx, timeout)
	t.Cleanup(r.cancel)
	return r
}

// counter counts applications per business key; safe for concurrent use.
// Effect calls are counted with add. Sink results are counted by the sink's
// counting rule (see sink.Outcome), per record (topic, partition, offset):
// each Applied result counts, and a record that no call reported Applied but
// one reported Redelivered (its claim names it under another term: the
// term that wrote it never saw the reply, its batch failed as unknown)
// counts once. So a key is counted once per record it was applied from,
// and twice only if two terms each wrote a claim for it: the ledger lost the
// first, or there is none.
type counter struct {
	mu          sync.Mutex
	n           map[string]int        // add: calls per key
	applied     map[recordID]int      // Applied results per record
	redelivered map[recordID]struct{} // records some call reported Redelivered
	keyOf       map[recordID]string
}

// recordID names a record: its topic, partition and offset.
type recordID struct {
	topic     string
	partition int32
	offset    int64
}

func newCounter() *counter {
	return &counter{n: map[string]int{}, applied: map[recordID]int{}, redelivered: map[recordID]struct{}{},
		keyOf: map[recordID]string{}}
}

func (c *counter) add(key string) {
	c.mu.Lock()
	c.n[key]++
	c.mu.Unlock()
}

func (c *counter) results(batch []sink.Record, res []sink.Result, err error) {
	if err != nil {
		return // outcome unknown: the record's next attempt reports it
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, r := range res {
		id := recordID{batch[i].Topic, batch[i].Partition, batch[i].Offset}
		switch {
		case r.Err != nil:
			continue
		case r.Outcome == sink.Applied:
			c.applied[id]++
		case r.Outcome == sink.Redelivered:
			c.redelivered[id] = struct{}{}
		default:
			continue
		}
		c.keyOf[id] = r.Key
	}
}

func (c *counter) snapshot() map[string]int {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n)+len(c.keyOf))
	for k, v := range c.n {
		out[k] = v
	}
	for id, key := range c.keyOf {
		if n := c.applied[id]; n > 0 {
			out[key] += n
		} else {
			out[key]++ // redelivered only: applied by a term that never saw the reply
		}
	}
	return out
}

// countingApplier counts the records its Applier reports as applied.
type countingApplier struct {
	pipeline.Applier
	c *counter
}

func (a countingApplier) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	res, err := a.Applier.Apply(ctx, batch)
	a.c.results(batch, res, err)
	return res, err
}

// Finish forwards to the wrapped Applier when it is a pipeline.Finisher
// (guard mode), so the kit's consumers finish as run's do.
func (a countingApplier) Finish(ctx context.Context, batch []sink.Record) (int, int, error) {
	if f, ok := a.Applier.(pipeline.Finisher); ok {
		return f.Finish(ctx, batch)
	}
	return 0, 0, nil
}

// countingEffect counts the effect's successful calls per business key.
func countingEffect(e pipeline.ExternalEffect, c *counter) pipeline.ExternalEffect {
	return func(ctx context.Context, key string, r *sink.Record) error {
		err := e(ctx, key, r)
		if err == nil {
			c.add(key)
		}
		return err
	}
}
