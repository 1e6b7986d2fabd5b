package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/termui"
	"github.com/shardpipe/shardpipe/sink"
)

func statusCommand() *cli.Command {
	return cliflags.Command(env, &cli.Command{
		Name:  "status",
		Usage: "show a group's committed offsets, last stable and log-end offsets, lag and owners per partition",
		UsageText: `shardpipe status --group shardpipe [--topic orders] [--json]

Examples:
   shardpipe status --brokers kafka:9092 --group shardpipe --topic orders
   shardpipe status --group shardpipe --json | jq .lag`,
		Description: "Lag is the last stable offset minus the committed offset (minus the log start when nothing\n" +
			"is committed). The last stable offset is the end a read_committed consumer such as run reaches: the\n" +
			"log end (high watermark), or the first record of a transaction still open. Classic groups: the owner comes from DescribeGroups, which does not report the\n" +
			"generation. Consumer-protocol (KIP-848) groups: owner and member epochs come from\n" +
			"ConsumerGroupDescribe. Without --topic, the topics the group has committed offsets for.\n" +
			"With --redis it also shows the ledger's manifest (--ledger-prefix): what its claims stand for.\n" +
			"Exits 3 when the group or a topic does not exist.",
	}, statusAction)
}

// statusConfig is status's validated configuration.
type statusConfig struct {
	kafkaConn
	topics  []string
	group   string
	json    bool
	timeout time.Duration
	ledger  settings.StatusLedger
}

func (sc *statusConfig) Groups() []cliflags.Group {
	gs := []cliflags.Group{kafkaGroup(&sc.kafkaConn),
		topicsGroup(&sc.topics, "topic to show; repeat or separate with commas (default: every topic the group committed)", false),
		consumerGroup(&sc.group),
		cliflags.NewGroup(func(c *cli.Command, _ *cliflags.Problems) { sc.json = c.Bool(fJSON) }, &cli.BoolFlag{Name: fJSON, Usage: "print JSON instead of a table"}),
		connectGroup(&sc.timeout, waitBrokers)}
	return append(gs, redisGroup(&sc.ledger.Redis), settings.StatusLedgerGroup(&sc.ledger, fRedis))
}

func statusAction(ctx context.Context, c *cli.Command, sc *statusConfig) error {
	ctx, cancel := context.WithTimeout(ctx, sc.timeout)
	defer cancel()
	st, err := describe(ctx, sc.kafkaConn, sc.group, sc.topics, sc.timeout)
	if err != nil {
		return err
	}
	m, err := sc.ledger.Manifest(ctx)
	if err != nil {
		return unavailableErr(err.Error())
	}
	if sc.json {
		err = termui.StatusJSON(c.Root().Writer, statusWithLedger{GroupStatus: st, Manifest: m})
	} else if err = termui.StatusTable(c.Root().Writer, st); err != nil {
		err = fmt.Errorf("write status: %w", err)
	} else if sc.ledger.Given {
		err = termui.ManifestLine(c.Root().Writer, sc.ledger.Prefix, m)
	}
	if err != nil {
		return failure(err)
	}
	return nil
}

// describe gathers the group's status (admin.DescribeGroup).
func describe(ctx context.Context, k kafkaConn, group string, topics []string, timeout time.Duration) (admin.GroupStatus, error) {
	cl, err := k.adminClient()
	if err != nil {
		return admin.GroupStatus{Group: group}, failure(err)
	}
	defer cl.Close()
	st, err := admin.DescribeGroup(ctx, kadm.NewClient(cl), group, topics...)
	if errors.Is(err, admin.ErrGroupMissing) || errors.Is(err, admin.ErrTopicMissing) {
		var lines []string
		for _, e := range admin.Problems(err) {
			lines = append(lines, e.Error())
		}
		return st, unavailableErr(lines...)
	}
	if err != nil {
		return st, exitFor(err, k, timeout)
	}
	return st, nil
}

// statusWithLedger is status --json's document: the group's status and,
// with --redis, the ledger's manifest.
type statusWithLedger struct {
	admin.GroupStatus
	Manifest *sink.Manifest `json:"ledger_manifest,omitempty"`
}
