package main

import (
	"time"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pipeline"
)

// runConfig is run's validated configuration; consume is settings.Consume,
// its fields copied out once loaded.
type runConfig struct {
	kafkaConn
	topics []string
	group  string
	sinkConfig
	effectConfig
	consume         settings.Consume
	protocol        pipeline.Protocol
	startLatest     bool
	sessionTimeout  time.Duration
	shutdownTimeout time.Duration
	metricsAddr     string
	instanceID      string // "": dynamic membership
}

// groups are run's flags, in the order of docs/configuration.md's table.
func (rc *runConfig) Groups() []cliflags.Group {
	gs := []cliflags.Group{kafkaGroup(&rc.kafkaConn),
		topicsGroup(&rc.topics, "topic to consume; repeat the flag or separate with commas (required)", true),
		consumerGroup(&rc.group)}
	gs = append(gs, rc.groups(func() []string { return rc.topics })...)
	gs = append(gs, rc.effectGroups(&rc.ledgerConfig)...)
	gs = append(gs, cliflags.Then(settings.ConsumeGroup(&rc.consume), func() {
		cs := rc.consume
		rc.protocol, rc.startLatest, rc.sessionTimeout, rc.shutdownTimeout, rc.instanceID = cs.Protocol, cs.StartLatest, cs.SessionTimeout, cs.ShutdownTimeout, cs.InstanceID
		rc.p.CreateDLQ = cs.CreateDLQ
	}), settings.MetricsGroup(&rc.metricsAddr, "serve Prometheus metrics (per partition counters, offsets and lag; latency histograms; Kafka client, Redis pool, Go and process metrics) at http://ADDR/metrics, the probes /healthz and /readyz, and the status page /status, e.g. :9464 (empty: off)"))
	return append(gs, rc.tail("how often to log a one-line progress summary",
		func() []settings.OwnedKey { return []settings.OwnedKey{rc.p.ProbeKey()} })...)
}
