package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
)

func resetOffsetsCommand() *cli.Command {
	return &cli.Command{
		Name:  "reset-offsets",
		Usage: "move a group's committed offsets on a topic, only while the group has no active members",
		UsageText: `shardpipe reset-offsets --group G --topic T --to earliest|latest|OFFSET|TIME|DURATION [--partitions 0,3] [--dry-run]

Examples:
   shardpipe reset-offsets --group shardpipe --topic orders --to 2026-11-30T04:00:00Z --dry-run
   shardpipe reset-offsets --group shardpipe --topic orders --to earliest`,
		Description: "Refuses (exit 1) while the group has members: stop every consumer first. TIME moves each\n" +
			"partition to the first record at or after it; a DURATION means that long ago; an OFFSET is\n" +
			"clamped to the partition's log start and end. Prints the before and after table; --dry-run\n" +
			"prints it and commits nothing. The ledger still suppresses what it holds when the group\n" +
			"reads the records again; a move back over records older than --ttl whose keys the ledger\n" +
			"(--redis, --ledger-prefix, --key-from) lacks, which would apply again, is refused (exit 2)\n" +
			"unless --force (--dry-run only warns).",
		Flags: append([]cli.Flag{
			brokersFlag(),
			groupFlag(),
			&cli.StringFlag{Name: fTopic, Sources: fromEnv(fTopic), Usage: "topic whose offsets to move (required)"},
			&cli.StringFlag{Name: fTo, Sources: fromEnv(fTo),
				Usage: "where to (required): earliest, latest, an offset, an RFC 3339 time or a duration ago"},
			&cli.StringFlag{Name: fReplayPartitions, Sources: fromEnv(fReplayPartitions),
				Usage: "partitions to move, comma-separated (default: all)"},
			&cli.BoolFlag{Name: fDryRun, Sources: fromEnv(fDryRun), Usage: "print the before and after table, commit nothing"},
			&cli.BoolFlag{Name: fForce, Sources: fromEnv(fForce),
				Usage: "move the offsets even when the group would read again records older than --ttl whose keys the ledger lacks: their entries may have expired, so their effects apply again (skips that check)"},
			connectTimeoutFlag(),
		}, ledgerFlags()...), // as run takes them: the ledger the group's records are checked against
		Action: resetOffsetsAction,
	}
}

func resetOffsetsAction(ctx context.Context, c *cli.Command) error {
	var bad problems
	brokers := brokerList(&bad, c.StringSlice(fBrokers))
	kopts := kafkaSecurity(c, &bad)
	group := strings.TrimSpace(c.String(fGroup))
	if group == "" {
		bad.addf("%s: empty; name the consumer group", flagRef(fGroup))
	}
	topic := strings.TrimSpace(c.String(fTopic))
	if topic == "" {
		bad.addf("%s: no topic given", flagRef(fTopic))
	} else if msg := topicProblem(topic); msg != "" {
		bad.addf("%s %q: %s", flagRef(fTopic), topic, msg)
	}
	var to admin.Target
	switch s := strings.TrimSpace(c.String(fTo)); s {
	case "":
		bad.addf("%s: empty; want earliest, latest, an offset, an RFC 3339 time or a duration ago", flagRef(fTo))
	case "earliest":
		to = admin.Earliest() // clamped to the log start
	case "latest":
		to = admin.Latest()
	default:
		b, err := parseBound(s, time.Now())
		if err != nil {
			bad.addf("%s %q: %v, or earliest or latest", flagRef(fTo), s, err)
		}
		to = admin.ToBound(b)
	}
	var parts []int32
	if s := c.String(fReplayPartitions); s != "" {
		for _, f := range splitList([]string{s}) {
			n, err := strconv.ParseInt(f, 10, 32)
			if err != nil || n < 0 {
				bad.addf("%s %q: %q is not a partition number", flagRef(fReplayPartitions), s, f)
				continue
			}
			parts = append(parts, int32(n))
		}
	}
	timeout := positive(&bad, c, fConnectTimeout)
	lc := loadLedgerConfig(c, &bad)
	if len(bad) > 0 {
		return usageErr(bad...)
	}
	now := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cl, err := adminClient(brokers, kopts...)
	if err != nil {
		return failure(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if err := admin.CheckTopics(ctx, adm, topic); err != nil {
		return exitFor(err, brokers, timeout)
	}
	if err := admin.RequireNoMembers(ctx, adm, group); err != nil {
		return exitFor(err, brokers, timeout)
	}
	moves, err := admin.PlanReset(ctx, adm, group, topic, to, parts...)
	if errors.Is(err, pipeline.ErrUnknownPartition) {
		return usageErr(fmt.Sprintf("%s: %v", flagRef(fReplayPartitions), err))
	}
	if err != nil {
		return exitFor(err, brokers, timeout)
	}
	if err := resetRisk(ctx, c, lc, brokers, kopts, topic, adm, moves, now); err != nil {
		return err
	}
	if c.Bool(fDryRun) {
		return printMoves(c.Root().Writer, group, topic, moves, true)
	}
	if err := admin.ResetOffsets(ctx, adm, group, topic, moves); err != nil {
		return exitFor(err, brokers, timeout)
	}
	return printMoves(c.Root().Writer, group, topic, moves, false)
}

// resetRisk applies the TTL rule (ttlRisk) to the records the group would
// read again: from each partition's new offset up to its committed one.
func resetRisk(ctx context.Context, c *cli.Command, lc ledgerConfig, brokers []string, kopts []kgo.Opt, topic string, adm *kadm.Client,
	moves []admin.Move, now time.Time) error {
	back := admin.ReadAgain(moves)
	if len(back) == 0 {
		return nil
	}
	log := newLogger(c.Root().ErrWriter, "text", slog.LevelInfo)
	risk := ttlRisk{brokers: brokers, kafkaOpts: kopts, topic: topic, ttl: lc.ttl, now: now, log: log, what: "the group"}
	var rdb redis.UniversalClient
	defer func() {
		if rdb != nil {
			rdb.Close()
		}
	}()
	lines, err := risk.lines(ctx, adm, back, !c.Bool(fForce), func() (pipeline.Checker, error) {
		rdb = lc.redis.client()
		if err := rdb.Ping(ctx).Err(); err != nil {
			return nil, unavailableErr(fmt.Sprintf("redis %s: %v (needed to check records older than --ttl %v; --force skips the check)",
				lc.redis.desc, err, lc.ttl))
		}
		keysOnly := lc
		keysOnly.totals = nil // only the keys are asked about
		return newLedger(keysOnly, topic, rdb, log)
	})
	switch {
	case err != nil:
		return err
	case len(lines) == 0:
		return nil
	case c.Bool(fDryRun):
		log.Warn("the group would read again records older than the ledger TTL without ledger entries: they would apply again",
			"ttl", lc.ttl, "partitions", strings.Join(lines, "; "))
		return nil
	}
	return usageErr(append(lines, "pass --force to move the offsets anyway (they apply again), or move them to a later --to")...)
}

func printMoves(out io.Writer, group, topic string, moves []admin.Move, dry bool) error {
	w := &stickyWriter{w: out}
	if dry {
		fmt.Fprintf(w, "dry run: group %s topic %s (nothing committed)\n", group, topic)
	} else {
		fmt.Fprintf(w, "group %s topic %s: offsets moved\n", group, topic)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PARTITION\tBEFORE\tAFTER\t")
	for _, m := range moves {
		before := "-"
		if m.Before >= 0 {
			before = strconv.FormatInt(m.Before, 10)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t\n", m.Partition, before, m.After)
	}
	_ = tw.Flush()
	return w.err
}
