package main

import (
	"fmt"
	"net"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/internal/settings"
)

// Flag names of run's static membership and dead-letter topic creation, and
// the metrics address of run and replay.
const (
	fMetricsAddr    = "metrics-addr"
	fInstanceID     = "instance-id"
	fCreateDLQTopic = "create-dlq-topic"
)

// metricsGroup is --metrics-addr of run and replay; usage says what it serves.
func metricsGroup(addr *string, usage string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		if *addr = c.String(fMetricsAddr); *addr != "" {
			if msg := flagcheck.ListenAddr(*addr); msg != "" {
				bad.Addf("%s %q: %s", flagRef(fMetricsAddr), *addr, msg)
			}
		}
	}, &cli.StringFlag{Name: fMetricsAddr, Usage: usage})
}

// membershipGroup is run's --instance-id and --create-dlq-topic.
func (rc *runConfig) membershipGroup() cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		rc.p.CreateDLQ = c.Bool(fCreateDLQTopic)
		if c.IsSet(fInstanceID) {
			if rc.instanceID = strings.TrimSpace(c.String(fInstanceID)); flagcheck.InstanceID(rc.instanceID) != "" {
				bad.Addf("%s %q: %s", flagRef(fInstanceID), c.String(fInstanceID), flagcheck.InstanceID(rc.instanceID))
			}
		}
	},
		&cli.StringFlag{Name: fInstanceID,
			Usage: "static group membership (group.instance.id), unique per process (e.g. the pod name of a StatefulSet). Classic protocol: a restart with the same ID within --session-timeout keeps its partitions, with no rebalance; SIGTERM still drains and commits but sends no LeaveGroup, so the partitions wait, unconsumed, until the ID returns or the session times out. Consumer protocol: SIGTERM sends a temporary leave (epoch -2), but a restart may be refused for some seconds (UNRELEASED_INSTANCE_ID) while the group hands its partitions to others (empty: dynamic membership, a stop leaves at once)"},
		&cli.BoolFlag{Name: fCreateDLQTopic, Value: true,
			Usage: "with --on-poison dlq, on by default: create a missing dead-letter topic with its source's partition count and replication factor, and log it (false: refuse to start, naming it)"})
}

// listenMetrics binds --metrics-addr (nil for "") before anything
// connects: a taken address is a start-up problem the flag fixes (exit 2
// naming it).
func listenMetrics(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageErr(fmt.Sprintf("%s %s: cannot listen there (%v); choose a free address or leave it empty", flagRef(fMetricsAddr), addr, err))
	}
	return ln, nil
}

// healthKey is the Redis key readiness writes (settings.HealthKey).
func healthKey(dlqPrefix string) string { return settings.HealthKey(dlqPrefix) }
