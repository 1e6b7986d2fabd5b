package bench

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
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
	p, err := pipeline.New(pipeline.Brokers(spec.Brokers...), pipeline.KafkaOptions(spec.kafka...), pipeline.Topics(spec.Topic),
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
	// One record per partition first, outside the measurement: the producer
	// loads the new topic's metadata and its producer ID, the consumer its
	// first fetch of every partition. On a topic this new the broker may not
	// host every partition yet when the consumer lists their start offsets;
	// franz-go retries those partitions about a second later, and until then
	// it fetches none of their records. Waiting for one record to land per
	// partition keeps that start-up delay out of the figures.
	if err := warmUp(ctx, spec); err != nil {
		return Result{}, err
	}
	warm := time.After(60 * time.Second)
	for t.landed.Load() < int64(spec.Partitions) {
		select {
		case <-time.After(time.Millisecond):
		case err := <-runErr:
			return Result{}, fmt.Errorf("pipeline stopped before the warm-up records landed: %v", err)
		case <-warm:
			return Result{}, fmt.Errorf("only %d of %d warm-up records landed within 60s", t.landed.Load(), spec.Partitions)
		}
	}
	t.mu.Lock()
	t.latencies = t.latencies[:0]
	t.mu.Unlock()
	t.landed.Store(0)
	produced, acks, err := offer(ctx, spec)
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
	return Result{Records: produced, Seconds: spec.Duration.Seconds(), Applied: t.applied.Load(),
		P50ms: quantileMs(lat, 0.5), P99ms: quantileMs(lat, 0.99), MaxMs: quantileMs(lat, 1),
		AckP50ms: quantileMs(acks, 0.5), AckP99ms: quantileMs(acks, 0.99)}, nil
}

// quantileMs sorts ds and returns its q quantile in milliseconds.
func quantileMs(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return float64(ds[int(q*float64(len(ds)-1))]) / 1e6
}

// warmUp produces one record to each partition and waits for their
// acknowledgements. They share one key, so the ledger holds one warm-up key
// (the first applied, the rest suppressed: all land) and Clean removes it.
func warmUp(ctx context.Context, spec Spec) error {
	cl, err := kgo.NewClient(spec.seeds(kgo.DefaultProduceTopic(spec.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer cl.Close()
	rs := make([]*kgo.Record, spec.Partitions)
	for i := range rs {
		rs[i] = &kgo.Record{Key: []byte("warm-up"), Value: value(0, time.Now()), Partition: int32(i)}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("warm-up records: %w", err)
	}
	return nil
}

// offer produces Rate records per second for Duration (a token bucket
// refilled every millisecond), each timestamped as it is handed to the
// client, and waits for them to be acknowledged. It returns how many it
// sent and each one's time from its timestamp to its acknowledgement.
func offer(ctx context.Context, spec Spec) (int64, []time.Duration, error) {
	cl, err := kgo.NewClient(spec.seeds(kgo.DefaultProduceTopic(spec.Topic),
		kgo.ProducerLinger(0))...)
	if err != nil {
		return 0, nil, fmt.Errorf("producer: %w", err)
	}
	defer cl.Close()
	var (
		failed atomic.Pointer[error]
		mu     sync.Mutex
		acks   = make([]time.Duration, 0, int(spec.Duration.Seconds()*float64(spec.Rate))+1)
	)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	var sent int64
	for now := start; now.Sub(start) < spec.Duration; now = <-tick.C {
		due := int64(now.Sub(start).Seconds() * float64(spec.Rate))
		for ; sent < due; sent++ {
			i := int(sent)
			r := &kgo.Record{Key: []byte(Key(i)), Value: value(i, now), Timestamp: time.Now()}
			cl.Produce(ctx, r, func(r *kgo.Record, err error) {
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				d := time.Since(r.Timestamp)
				mu.Lock()
				acks = append(acks, d)
				mu.Unlock()
			})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, nil, fmt.Errorf("producer flush: %w", err)
	}
	if e := failed.Load(); e != nil {
		return 0, nil, fmt.Errorf("produce: %w", *e)
	}
	mu.Lock()
	defer mu.Unlock()
	return sent, acks, nil
}
