package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/termui"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// fCreate lets reset-offsets create a group that does not exist.
const fCreate = settings.FlagCreate

func resetOffsetsCommand() *cli.Command {
	return cliflags.Command(env, &cli.Command{
		Name:  "reset-offsets",
		Usage: "move a group's committed offsets on a topic, only while the group has no active members",
		UsageText: `shardpipe reset-offsets --group G --topic T --to earliest|latest|OFFSET|TIME|DURATION [--partition-ids 0,3] [--dry-run]

Examples:
   shardpipe reset-offsets --group shardpipe --topic orders --to 2026-11-30T04:00:00Z --dry-run
   shardpipe reset-offsets --group shardpipe --topic orders --to earliest`,
		Description: "Refuses (exit 1) while the group has members: stop every consumer first (--dry-run plans\n" +
			"the move of a live group anyway, saying so). A group that\n" +
			"does not exist (a mistyped name) is refused (exit 3) unless --create. TIME moves each\n" +
			"partition to the first record at or after it; a DURATION means that long ago; an OFFSET is\n" +
			"clamped to the partition's log start and end. Prints the before and after table; --dry-run\n" +
			"prints it and commits nothing. The ledger still suppresses what it holds when the group\n" +
			"reads the records again; a move back over records older than --ttl whose keys the ledger\n" +
			"(--redis, --ledger-prefix, --key-from) lacks, which would apply again, is refused (exit 2)\n" +
			"unless --force (--dry-run only warns).",
	}, resetOffsetsAction)
}

// resetConfig is reset-offsets' validated configuration.
type resetConfig struct {
	kafkaConn
	group, topic string
	settings.Reset
	timeout time.Duration
	ledger  ledgerConfig // as run takes it: the ledger the group's records are checked against
	own     string       // --dlq-prefix: where the ledger's manifest lives
}

func (rc *resetConfig) Groups() []cliflags.Group {
	gs := append([]cliflags.Group{kafkaGroup(&rc.kafkaConn), consumerGroup(&rc.group), topicGroup(&rc.topic, "topic whose offsets to move")},
		settings.ResetGroups(&rc.Reset)...)
	return append(append(gs, connectGroup(&rc.timeout, "how long the command may wait in all: for the brokers, and for the ledger check when the group would read again records older than --ttl")),
		append(ledgerGroups(&rc.ledger), cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
			if rc.own = c.String(settings.FlagDLQPrefix); rc.own == "" {
				bad.Addf("%s: empty; the ledger's manifest lives under shardpipe's own prefix", flagRef(settings.FlagDLQPrefix))
			}
		},
			&cli.StringFlag{Name: settings.FlagDLQPrefix, Value: settings.DefaultOwnPrefix,
				Usage: "the prefix of shardpipe's own keys, as run was given it: the ledger's manifest, which says its key space, lives under it"}))...)
}

func resetOffsetsAction(ctx context.Context, c *cli.Command, rc *resetConfig) error {
	group, topic, timeout := rc.group, rc.topic, rc.timeout
	now := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cl, err := rc.adminClient()
	if err != nil {
		return failure(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if err := admin.CheckTopics(ctx, adm, topic); err != nil {
		return exitFor(err, rc.kafkaConn, timeout)
	}
	var opts []admin.ResetOpt
	if rc.Create {
		opts = append(opts, admin.CreateGroup())
	}
	var live *admin.CheckError
	if err := admin.RequireGroup(ctx, adm, group, opts...); rc.DryRun && errors.Is(err, admin.ErrGroupActive) && errors.As(err, &live) {
		// A plan only: the real run is refused until the group stops.
		fmt.Fprintf(c.Root().Writer, "note: group %q is live (active members: %s): this plan commits nothing, the real run is refused (exit 1) until every consumer of the group stops, and the offsets it moves from may change before then\n",
			group, live.Value)
	} else if err != nil {
		return exitFor(err, rc.kafkaConn, timeout)
	}
	moves, err := admin.PlanReset(ctx, adm, group, topic, rc.To, rc.Partitions...)
	if errors.Is(err, pipeline.ErrUnknownPartition) {
		return usageErr(fmt.Sprintf("%s: %v", flagRef(fPartitionIDs), err))
	}
	if err != nil {
		return exitFor(err, rc.kafkaConn, timeout)
	}
	if err := resetRisk(ctx, c, rc, adm, moves, now); err != nil {
		return err
	}
	if rc.DryRun {
		return termui.MovesTable(c.Root().Writer, group, topic, moves, true)
	}
	if err := admin.ResetOffsets(ctx, adm, group, topic, moves, opts...); err != nil {
		return exitFor(err, rc.kafkaConn, timeout)
	}
	return termui.MovesTable(c.Root().Writer, group, topic, moves, false)
}

// resetRisk applies the TTL rule (ttlRisk) to the records the group would
// read again: from each partition's new offset up to its committed one.
func resetRisk(ctx context.Context, c *cli.Command, rc *resetConfig, adm *kadm.Client, moves []admin.Move, now time.Time) error {
	lc := rc.ledger
	back := admin.ReadAgain(moves)
	if len(back) == 0 {
		return nil
	}
	log := newLogger(c.Root().ErrWriter, logConfig{format: "text"})
	risk := ttlRisk{kafkaConn: rc.kafkaConn, topic: rc.topic, ttl: lc.ttl, now: now, log: log, what: "the group"}
	var rdb redis.UniversalClient
	defer func() {
		if rdb != nil {
			rdb.Close()
		}
	}()
	return risk.check(ctx, adm, back, rc.Force, rc.DryRun, func() (pipeline.Checker, error) {
		rdb = lc.redis.Client()
		if err := rdb.Ping(ctx).Err(); err != nil {
			return nil, unavailableErr(fmt.Sprintf("redis %s: %v (needed to check records older than --ttl %v; --force skips the check)",
				lc.redis.Desc, err, lc.ttl))
		}
		keysOnly := lc
		// The key space is the ledger's, from its manifest (under
		// --dlq-prefix, as run keeps it) when it has one: a --key-space
		// given that says otherwise is refused, as run refuses it.
		key := sink.ManifestKey(rc.own, lc.l.Spec.Prefix)
		m, ok, err := sink.ReadManifest(ctx, rdb, key)
		switch {
		case errors.Is(err, sink.ErrMisconfigured):
			return nil, usageErr(fmt.Sprintf("%s: %v (needed to check records older than --ttl %v; --force skips the check)", flagRef(settings.FlagDLQPrefix), err, lc.ttl))
		case err != nil:
			return nil, unavailableErr(fmt.Sprintf("redis %s: reading the ledger's manifest %s: %v (needed to check records older than --ttl %v; --force skips the check)",
				lc.redis.Desc, key, err, lc.ttl))
		case ok && lc.l.Given.KeySpace && lc.l.KeySpace() != m.KeySpace:
			return nil, usageErr(fmt.Sprintf("%s %s: the ledger's manifest %s says its key space is %s; give that, or leave %s out",
				flagRef("key-space"), lc.l.KeySpace(), key, m.KeySpace, flagRef("key-space")))
		case ok:
			keysOnly.l.Spec.PerTopic = m.KeySpace == "per-topic"
		}
		keysOnly.l.Spec.Totals = nil // only the keys are asked about
		return keysOnly.spec(log).Ledger(rdb, rc.topic)
	}, "pass --force to move the offsets anyway (they apply again), or move them to a later --to")
}
