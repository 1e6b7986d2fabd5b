package settings

import (
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
)

// FlagMetricsAddr is the address of run's and replay's metrics and
// probes, which a refusal to listen there names.
const FlagMetricsAddr = "metrics-addr"

const (
	fStart           = "start"
	fSessionTimeout  = "session-timeout"
	fShutdownTimeout = "shutdown-timeout"
	fInstanceID      = "instance-id"
	fCreateDLQTopic  = "create-dlq-topic"
)

// Consume is how run consumes in its group: the protocol, where a group
// with no committed offset starts, its timeouts, its membership and
// whether missing dead-letter topics are created.
type Consume struct {
	// Protocol is the consumer group protocol, classic or consumer (KIP-848).
	Protocol pipeline.Protocol
	// StartLatest starts a group with no committed offset at each
	// partition's end instead of its start.
	StartLatest bool
	// SessionTimeout is how long a classic member may stop heartbeating
	// before it leaves the group; positive.
	SessionTimeout time.Duration
	// ShutdownTimeout is how long run drains and commits on a signal before
	// it leaves the group; positive.
	ShutdownTimeout time.Duration
	// InstanceID is the static membership's group.instance.id; "": dynamic
	// membership.
	InstanceID string
	// CreateDLQ creates a missing dead-letter topic (Poison.CreateDLQ).
	CreateDLQ bool
}

// SessionLimit words how long a member that stops heartbeating stays in
// the group under cs's protocol, for a message saying why run waits:
// --session-timeout, or the broker's setting under the consumer protocol.
func (cs Consume) SessionLimit() string {
	if cs.Protocol == pipeline.Consumer {
		return "the broker's group.consumer.session.timeout.ms (45s by default)"
	}
	return cs.SessionTimeout.String() + " (--session-timeout)"
}

// ConsumeGroup is run's consuming flags, loaded into cs.
func ConsumeGroup(cs *Consume) cliflags.Group {
	return cliflags.NewGroup(cs.load,
		&cli.StringFlag{Name: fGroupProtocol, Value: "classic", Usage: "consumer group protocol: classic, or consumer (KIP-848, Kafka 4.0+)"},
		&cli.StringFlag{Name: fStart, Value: "earliest", Usage: "where a group with no committed offset starts: earliest or latest"},
		&cli.DurationFlag{Name: fSessionTimeout, Value: 45 * time.Second,
			Usage: "classic protocol: a member that stops heartbeating (a killed process) leaves the group after this; the broker's group.min/max.session.timeout.ms bound it"},
		&cli.DurationFlag{Name: fShutdownTimeout, Value: 30 * time.Second,
			Usage: "on SIGINT or SIGTERM: how long to drain and commit before leaving the group"},
		&cli.StringFlag{Name: fInstanceID,
			Usage: "static group membership (group.instance.id), unique per process (e.g. the pod name of a StatefulSet). Classic protocol: a restart with the same ID within --session-timeout keeps its partitions, with no rebalance; SIGTERM still drains and commits but sends no LeaveGroup, so the partitions wait, unconsumed, until the ID returns or the session times out. Consumer protocol: SIGTERM sends a temporary leave (epoch -2), but a restart may be refused for some seconds (UNRELEASED_INSTANCE_ID) while the group hands its partitions to others (empty: dynamic membership, a stop leaves at once)"},
		&cli.BoolFlag{Name: fCreateDLQTopic, Value: true,
			Usage: "with --on-poison dlq, on by default: create a missing dead-letter topic with its source's partition count and replication factor, and log it (false: refuse to start, naming it)"})
}

// load reads how run consumes: protocol, start, timeouts, membership.
func (cs *Consume) load(c *cli.Command, bad *cliflags.Problems) {
	var err error
	if cs.Protocol, err = pipeline.ParseProtocol(c.String(fGroupProtocol)); err != nil {
		bad.Addf("%s %q: want classic or consumer", ref(fGroupProtocol), c.String(fGroupProtocol))
	}
	switch s := c.String(fStart); s {
	case "earliest":
	case "latest":
		cs.StartLatest = true
	default:
		bad.Addf("%s %q: want earliest or latest", ref(fStart), s)
	}
	cs.SessionTimeout = timeout(bad, c, fSessionTimeout)
	cs.ShutdownTimeout = timeout(bad, c, fShutdownTimeout)
	cs.CreateDLQ = c.Bool(fCreateDLQTopic)
	if c.IsSet(fInstanceID) {
		if cs.InstanceID = strings.TrimSpace(c.String(fInstanceID)); flagcheck.InstanceID(cs.InstanceID) != "" {
			bad.Addf("%s %q: %s", ref(fInstanceID), c.String(fInstanceID), flagcheck.InstanceID(cs.InstanceID))
		}
	}
}

// MetricsGroup is --metrics-addr of run and replay, loaded into addr ("":
// off); usage says what it serves.
func MetricsGroup(addr *string, usage string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		if *addr = c.String(FlagMetricsAddr); *addr != "" {
			if msg := flagcheck.ListenAddr(*addr); msg != "" {
				bad.Addf("%s %q: %s", ref(FlagMetricsAddr), *addr, msg)
			}
		}
	}, &cli.StringFlag{Name: FlagMetricsAddr, Usage: usage})
}
