package bench

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// runLatency offers Rate records per second for Duration to an empty topic
// while shardpipe (defaults, but CommitInterval) consumes it, and measures
// each record's time from its timestamp, set when it is produced, to its
// effect landing in Redis. Kafka timestamps are whole milliseconds, so each
// figure may read up to 1ms high.
func runLatency(ctx context.Context, spec Spec, log *slog.Logger) (Result, error) {
	rdb, err := NewRedis(spec.Redis)
	if err != nil {
		return Result{}, err
	}
	defer rdb.Close()
	l, err := sink.NewLedger(rdb, sink.WithPrefix(spec.Prefix), sink.WithTTL(spec.TTL))
	if err != nil {
		return Result{}, err
	}
	t := newTimed(l, 0, true)
	assigned := make(chan struct{}, spec.Partitions)
	p, err := pipeline.New(pipeline.Brokers(spec.Brokers...), pipeline.Topics(spec.Topic),
		pipeline.Group(spec.Group), pipeline.Sink(t), pipeline.Logger(log),
		pipeline.CommitInterval(spec.CommitInterval),
		pipeline.Observe(func(e pipeline.Event) {
			if e.Kind == pipeline.Assigned {
				assigned <- struct{}{}
			}
		}))
	if err != nil {
		return Result{}, err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- p.Run(ctx) }()
	defer func() { _ = p.Close(context.Background()) }()
	for range spec.Partitions {
		select {
		case <-assigned:
		case err := <-runErr:
			return Result{}, fmt.Errorf("pipeline stopped before its assignment: %v", err)
		case <-time.After(60 * time.Second):
			return Result{}, fmt.Errorf("no assignment of %d partitions within 60s", spec.Partitions)
		}
	}
	produced, err := offer(ctx, spec)
	if err != nil {
		return Result{}, err
	}
	deadline := time.After(60 * time.Second)
	for t.landed.Load() < produced {
		select {
		case <-time.After(10 * time.Millisecond):
		case err := <-runErr:
			return Result{}, fmt.Errorf("pipeline stopped after %d of %d records: %v", t.landed.Load(), produced, err)
		case <-deadline:
			return Result{}, fmt.Errorf("only %d of %d records landed within 60s", t.landed.Load(), produced)
		}
	}
	t.mu.Lock()
	lat := slices.Clone(t.latencies)
	t.mu.Unlock()
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / 1e6 }
	return Result{Records: produced, Seconds: spec.Duration.Seconds(), Applied: t.applied.Load(),
		P50ms: ms(0.50), P99ms: ms(0.99), MaxMs: ms(1)}, nil
}

// offer produces Rate records per second for Duration (a token bucket
// refilled every millisecond), each timestamped as it is handed to the
// client, and waits for them to be acknowledged.
func offer(ctx context.Context, spec Spec) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(spec.Brokers...), kgo.DefaultProduceTopic(spec.Topic),
		kgo.ProducerLinger(0))
	if err != nil {
		return 0, fmt.Errorf("producer: %w", err)
	}
	defer cl.Close()
	var failed atomic.Pointer[error]
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	var sent int64
	for now := start; now.Sub(start) < spec.Duration; now = <-tick.C {
		due := int64(now.Sub(start).Seconds() * float64(spec.Rate))
		for ; sent < due; sent++ {
			i := int(sent)
			r := &kgo.Record{Key: []byte(Key(i)), Value: value(i, now), Timestamp: time.Now()}
			cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, fmt.Errorf("producer flush: %w", err)
	}
	if e := failed.Load(); e != nil {
		return 0, fmt.Errorf("produce: %w", *e)
	}
	return sent, nil
}
