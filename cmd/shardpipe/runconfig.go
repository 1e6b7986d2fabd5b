package main

import (
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of run alone.
const (
	fGroupProtocol   = "group-protocol"
	fStart           = "start"
	fSessionTimeout  = "session-timeout"
	fShutdownTimeout = "shutdown-timeout"
)

// runConfig is run's validated configuration.
type runConfig struct {
	kafkaConn
	topics []string
	group  string
	sinkConfig
	http            httpConfig // with --effect http
	inflight        inflightConfig
	protocol        pipeline.Protocol
	startLatest     bool
	sessionTimeout  time.Duration
	shutdownTimeout time.Duration
	metricsAddr     string
	instanceID      string // "": dynamic membership
}

// groups are run's flags, in the order of the README's table.
func (rc *runConfig) Groups() []cliflags.Group {
	gs := []cliflags.Group{kafkaGroup(&rc.kafkaConn),
		topicsGroup(&rc.topics, "topic to consume; repeat the flag or separate with commas (required)", true),
		consumerGroup(&rc.group)}
	gs = append(gs, rc.groups(func() []string { return rc.topics })...)
	gs = append(gs, httpGroup(&rc.http, &rc.httpEffect), inflightGroup(&rc.inflight),
		cliflags.NewGroup(rc.loadConsume,
			&cli.StringFlag{Name: fGroupProtocol, Value: "classic", Usage: "consumer group protocol: classic, or consumer (KIP-848, Kafka 4.0+)"},
			&cli.StringFlag{Name: fStart, Value: "earliest", Usage: "where a group with no committed offset starts: earliest or latest"},
			&cli.DurationFlag{Name: fSessionTimeout, Value: 45 * time.Second,
				Usage: "classic protocol: a member that stops heartbeating (a killed process) leaves the group after this; the broker's group.min/max.session.timeout.ms bound it"},
			&cli.DurationFlag{Name: fShutdownTimeout, Value: 30 * time.Second,
				Usage: "on SIGINT or SIGTERM: how long to drain and commit before leaving the group"}),
		rc.membershipGroup(), metricsGroup(&rc.metricsAddr, "serve Prometheus metrics (per partition counters, offsets and lag; latency histograms; Kafka client, Redis pool, Go and process metrics) at http://ADDR/metrics, the probes /healthz and /readyz, and the status page /status, e.g. :9464 (empty: off)"))
	return append(gs, rc.tail("how often to log a one-line progress summary")...)
}

// loadConsume reads how run consumes: protocol, start, timeouts.
func (rc *runConfig) loadConsume(c *cli.Command, bad *cliflags.Problems) {
	var err error
	if rc.protocol, err = pipeline.ParseProtocol(c.String(fGroupProtocol)); err != nil {
		bad.Addf("%s %q: want classic or consumer", flagRef(fGroupProtocol), c.String(fGroupProtocol))
	}
	switch s := c.String(fStart); s {
	case "earliest":
	case "latest":
		rc.startLatest = true
	default:
		bad.Addf("%s %q: want earliest or latest", flagRef(fStart), s)
	}
	rc.sessionTimeout = positive(bad, c, fSessionTimeout)
	rc.shutdownTimeout = positive(bad, c, fShutdownTimeout)
}
