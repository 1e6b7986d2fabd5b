package main

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/metrics"
	"github.com/shardpipe/shardpipe/opshttp"
	"github.com/shardpipe/shardpipe/pipeline"
)

// observability is what --metrics-addr serves: a registry with the
// pipeline's counters and latencies, the Kafka client's and the Redis
// pool's metrics, Go and process collectors, and the probes.
type observability struct {
	reg     *prometheus.Registry
	timings *metrics.Timings
	kafka   *metrics.Kafka
}

// newObservability builds the registry for a pipeline about to be created
// on rdb; its options go to pipeline.New.
func newObservability(rdb redis.UniversalClient) *observability {
	o := &observability{reg: prometheus.NewRegistry(), timings: metrics.NewTimings(), kafka: metrics.NewKafka()}
	o.reg.MustRegister(o.timings, metrics.NewRedisPool(rdb),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return o
}

// options are the pipeline options that feed the registry.
func (o *observability) options() []pipeline.Opt {
	return []pipeline.Opt{pipeline.Measure(o.timings), pipeline.KafkaOptions(kgo.WithHooks(o.kafka.Hook()))}
}

// serve registers p's counters and serves /metrics, the probes and the
// status page on addr until ctx ends (serveOps). healthKey is the Redis key
// readiness writes.
func (o *observability) serve(ctx context.Context, addr string, p *pipeline.Pipeline, rdb redis.UniversalClient,
	healthKey, group string, log *slog.Logger) (string, <-chan struct{}, error) {
	o.reg.MustRegister(metrics.NewCollector(p.Stats))
	probe := opshttp.New(p, opshttp.Redis(rdb, healthKey), opshttp.Group(group))
	return serveOps(ctx, addr, prometheus.Gatherers{o.reg, o.kafka}, probe.Handler(), log)
}

// healthKey is the Redis key readiness writes: one of shardpipe's own keys,
// which loadPoisonConfig keeps out of the ledger's prefix.
func healthKey(dlqPrefix string) string { return dlqPrefix + "health" }

// serveReplay registers a replay's counters and serves /metrics on addr
// (serveOps, without probes: a replay is in no group) until the returned
// func is called, which waits for the server to stop.
func (o *observability) serveReplay(addr string, stats func() []pipeline.PartitionStats, log *slog.Logger) (func(), error) {
	o.reg.MustRegister(metrics.NewCollector(stats))
	ctx, cancel := context.WithCancel(context.Background())
	_, served, err := serveOps(ctx, addr, prometheus.Gatherers{o.reg, o.kafka}, nil, log)
	if err != nil {
		cancel()
		return nil, err
	}
	return func() { cancel(); <-served }, nil
}
