package main

import (
	"context"
	"log/slog"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of run's operating settings. Each is also read from
// envName(name).
const (
	fInstanceID     = "instance-id"
	fCreateDLQTopic = "create-dlq-topic"
)

// operateConfig is run's static membership and dead-letter topic creation.
type operateConfig struct {
	instanceID string // "": dynamic membership
	createDLQ  bool   // create missing dead-letter topics
}

// operateFlags are run's --instance-id and --create-dlq-topic.
func operateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: fInstanceID, Sources: fromEnv(fInstanceID),
			Usage: "static group membership (group.instance.id), unique per process (e.g. the pod name of a StatefulSet). Classic protocol: a restart with the same ID within --session-timeout keeps its partitions, with no rebalance; SIGTERM still drains and commits but sends no LeaveGroup, so the partitions wait, unconsumed, until the ID returns or the session times out. Consumer protocol: SIGTERM sends a temporary leave (epoch -2), but a restart may be refused for some seconds (UNRELEASED_INSTANCE_ID) while the group hands its partitions to others (empty: dynamic membership, a stop leaves at once)"},
		&cli.BoolFlag{Name: fCreateDLQTopic, Value: true, Sources: fromEnv(fCreateDLQTopic),
			Usage: "with --on-poison dlq: create a missing dead-letter topic with its source's partition count and replication factor, and log it (false: refuse to start, naming it)"},
	}
}

// loadOperateConfig reads the operating flags.
func loadOperateConfig(c *cli.Command, bad *problems) operateConfig {
	oc := operateConfig{createDLQ: c.Bool(fCreateDLQTopic)}
	if c.IsSet(fInstanceID) {
		oc.instanceID = strings.TrimSpace(c.String(fInstanceID))
		if msg := instanceIDProblem(oc.instanceID); msg != "" {
			bad.addf("%s %q: %s", flagRef(fInstanceID), c.String(fInstanceID), msg)
		}
	}
	return oc
}

// instanceIDProblem says why id is not a legal group.instance.id (the
// broker's rule: 1 to 249 of a-z, A-Z, 0-9, '.', '_' and '-'), or "".
func instanceIDProblem(id string) string {
	switch {
	case id == "":
		return "empty; give each process its own ID, or leave the flag out"
	case len(id) > 249:
		return "longer than 249 characters"
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return "character " + quoteRune(r) + " not allowed (want a-z, A-Z, 0-9, '.', '_' or '-')"
		}
	}
	return ""
}

func quoteRune(r rune) string { return "'" + string(r) + "'" }

// groupOptions are the group-only pipeline options of oc.
func (oc operateConfig) groupOptions() []pipeline.GroupOpt {
	if oc.instanceID == "" {
		return nil
	}
	return []pipeline.GroupOpt{pipeline.InstanceID(oc.instanceID)}
}

// createDeadLetterTopics creates each missing dead-letter topic of rc's
// topics when rc dead-letters with --create-dlq-topic (admin.CreateDeadLetterTopics),
// logging each one it created; checkDeadLetterTopics then finds them.
func createDeadLetterTopics(ctx context.Context, rc runConfig, log *slog.Logger) error {
	if !rc.deadLetter || !rc.createDLQ {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, rc.connectTimeout)
	defer cancel()
	return exitFor(withAdmin(rc.brokers, func(adm *kadm.Client) error {
		created, err := admin.CreateDeadLetterTopics(ctx, adm, rc.dlqTopic, rc.topics)
		for _, c := range created {
			log.Info("created the missing dead-letter topic (--create-dlq-topic)", "topic", c.Topic,
				"partitions", c.Partitions, "replication_factor", c.Replication, "sources", c.Sources)
		}
		return err
	}), rc.brokers, rc.connectTimeout)
}
