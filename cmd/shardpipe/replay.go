package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/otelenv"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/termui"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

func replayCommand() *cli.Command {
	return cliflags.Command(env, &cli.Command{
		Name:  "replay",
		Usage: "replay a range of a topic through the ledger: apply only what the ledger lacks",
		UsageText: `shardpipe replay --topic orders --id ID --from OFFSET|TIME|DURATION [--to OFFSET|TIME] [options]

Examples:
   # what would a replay of the last 6 hours apply? (reads only)
   shardpipe replay --topic orders --id restore-1 --from 6h --redis redis:6379 --effect totals --dry-run

   # replay it, at most 2000 records a second; rerun the same line to continue after an interruption
   shardpipe replay --topic orders --id restore-1 --from 6h --redis redis:6379 --effect totals --rate 2000

   # partitions 0 and 3 between two times (--to is exclusive)
   shardpipe replay --topic orders --id fix-42 --partition-ids 0,3 --from 2026-11-30T01:00:00Z --to 2026-11-30T02:00:00Z

   # a ledger run applied with --effect sql: the same SQL flags as run; an order whose key
   # the inbox holds does not run the statement again, even when Redis lost its claim
   shardpipe replay --topic orders --id restore-2 --from 6h --redis redis:6379 --effect sql \
       --sql-url postgres://app@db:5432/shop --sql-password-file pg-password \
       --sql-exec 'INSERT INTO orders_applied (order_id, customer, amount_cents) VALUES (@order_id, @customer, @amount_cents)'`,
		Description: "Reads each partition's range by direct assignment (no consumer group: the live group is not\n" +
			"disturbed) up to an end fixed when the replay starts, and applies every record through the\n" +
			"ledger as run does: keys the ledger holds are suppressed, missing ones applied. --to is\n" +
			"exclusive. Progress is kept in Redis under --id with the range its first run planned; a rerun\n" +
			"with the same --id and range flags continues that range where the last run stopped (a\n" +
			"duration ago is not planned again), other range flags under a used --id are refused (exit 2),\n" +
			"and a newer run fences an older one still running (it exits 1). A range holding records\n" +
			"older than --ttl whose keys the ledger lacks (they would apply again) needs --force.\n" +
			"--effect http and sql run in guard mode as in run (with --max-in-flight): a key whose\n" +
			"claim is gone runs its effect again, a POST with the same Idempotency-Key, or for sql\n" +
			"the inbox transaction, which skips the statement for a key the inbox holds. --effect sql\n" +
			"checks PostgreSQL at start as run does: waited for within --connect-timeout, the inbox\n" +
			"created if missing, the statement prepared (exit 2 if refused, 3 if unreachable or the\n" +
			"password is). A dry run asks the Redis ledger only: no call, no PostgreSQL.\n" +
			"Ends with a table per partition on stdout.",
	}, replayAction)
}

func replayAction(ctx context.Context, c *cli.Command, rc *replayConfig) error {
	stderr := c.Root().ErrWriter
	log := newLogger(stderr, rc.log)
	rdb := rc.ledgerConfig.redis.Client()
	defer rdb.Close()
	ops, err := listenOps(rc.metricsAddr, rdb)
	if err != nil {
		return err
	}
	defer ops.Close()
	tr, err := otelenv.Start(ctx, os.Getenv, stderr, rdb)
	if err != nil {
		return usageErr(err.Error())
	}
	defer tr.Close()
	barrier, err := rc.start(ctx, rc.kafkaConn, admin.Access{Topics: []string{rc.topic}, Keys: []string{rc.checkpointPrefix + rc.id}}, rdb, !rc.dryRun, log)
	if err != nil {
		return err
	}
	stored, err := storedPlan(ctx, rc, rdb, log)
	if err != nil {
		return err
	}
	ledger, err := rc.ledgerConfig.spec(log).Ledger(rdb, rc.topic)
	if err != nil {
		return failure(err)
	}
	ranges, err := planReplay(ctx, rc, stored, ledger, log)
	if err != nil {
		return err
	}
	r, closeEffect, err := newReplay(ctx, rc, rdb, barrier, ranges, log, append(ops.Options(), tr.Options()...)...)
	if err != nil {
		return err
	}
	defer closeEffect()
	ops.Start(r.Stats, nil, log)
	ctx, stop := untilSignal(ctx)
	defer stop()
	view := termui.NewReplayView(stderr, r.Progress, rc.dryRun, rc.log.reportInterval, log)
	if rc.dryRun {
		err = r.DryRun(ctx, ledger)
	} else {
		err = r.Run(ctx)
	}
	view.Close()
	prog := r.Progress()
	termui.LogReplaySummary(log, rc.id, rc.topic, rc.dryRun, prog)
	if werr := termui.ReplaySummary(c.Root().Writer, rc.id, rc.topic, rc.dryRun, prog); werr != nil && err == nil {
		err = fmt.Errorf("write summary: %w", werr)
	}
	if rc.dryRun && err == nil {
		if werr := pinRelative(c.Root().Writer, c, rc); werr != nil {
			err = fmt.Errorf("write the command line: %w", werr)
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, checkpoint.ErrStaleEpoch):
		return failure(fmt.Errorf("replay %q was fenced: a newer replay with the same --id took over; this one stopped (%w)", rc.id, err))
	case errors.Is(err, pipeline.ErrPlanChanged): // another first run of the id stored its plan meanwhile
		return usageErr(err.Error(), "use a new --id for a new range, or give this id's range flags as its first run did")
	case errors.Is(err, pipeline.ErrPoisonStorm):
		return poisonStorm(err)
	case errors.Is(err, sink.ErrBadClaim):
		return sharedPrefix("replay", err, rc.ledgerConfig)
	case errors.Is(err, context.Canceled):
		return failure(fmt.Errorf("replay %q interrupted; what landed is checkpointed: run the same command again to continue", rc.id))
	}
	return failure(err)
}

// newReplay builds the replay's sink as run builds its own
// (effectConfig.applier: the ledger, or guard mode around an HTTP call or
// --effect sql's inbox transaction, opened first by openEffect as run
// opens it), paced by --rate, with run's --max-in-flight, and the replay
// over ranges; extra are added (ops, tracing). A dry run opens no
// database: it asks the Redis ledger only. The returned func closes what
// was opened; err is an exit error.
func newReplay(ctx context.Context, rc *replayConfig, rdb redis.UniversalClient, barrier pipeline.Barrier, ranges []pipeline.Range,
	log *slog.Logger, extra ...pipeline.Opt) (*pipeline.Replay, func(), error) {
	sqlEff := sqlEffect{close: func() {}}
	switch {
	case rc.dryRun && rc.sqlEffect:
		log.Info("dry run: PostgreSQL not contacted; would-apply counts the keys the Redis ledger lacks, and a replay would not run --sql-exec for those of them the inbox holds",
			"database", rc.sql.Desc, "inbox", rc.sql.Inbox)
	case !rc.dryRun:
		var err error
		if sqlEff, err = rc.openEffect(ctx, rc.ledgerConfig, rc.connectTimeout, log); err != nil {
			return nil, nil, err
		}
	}
	applier, err := rc.applier(rc.ledgerConfig, sqlEff.eff, []string{rc.topic}, rdb, log)
	if err != nil {
		sqlEff.close()
		return nil, nil, failure(err)
	}
	maxBatch := rc.commitConfig.maxBatch
	if rc.rate > 0 {
		applier = pipeline.Paced(applier, rc.rate)
		maxBatch = max(1, min(maxBatch, int(rc.rate/10)))
	}
	opts := []pipeline.ReplayOpt{pipeline.Brokers(rc.brokers...), pipeline.KafkaOptions(rc.opts...),
		pipeline.Sink(applier), pipeline.CheckpointPrefix(rc.checkpointPrefix), pipeline.PlanGiven(rc.given),
		pipeline.Options(rc.commitConfig.options(maxBatch, barrier, log)...),
		pipeline.Options(rc.poisonConfig.options(rdb, rc.ledgerConfig)...),
		pipeline.Options(rc.inflight.options()...), pipeline.Options(extra...)}
	r, err := pipeline.NewReplay(rc.id, rc.topic, ranges, rdb, opts...)
	if err != nil {
		sqlEff.close()
		return nil, nil, failure(err)
	}
	return r, sqlEff.close, nil
}

// planReplay fixes the ranges (the stored ones of an earlier run of the id
// when not nil) and applies the TTL rule (ttlRisk): a range holding records
// older than --ttl whose keys the ledger lacks, which would apply again,
// needs --force (a dry run only warns; --force skips the ledger check).
func planReplay(ctx context.Context, rc *replayConfig, stored []pipeline.Range, chk pipeline.Checker,
	log *slog.Logger) ([]pipeline.Range, error) {
	cl, err := rc.adminClient()
	if err != nil {
		return nil, failure(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	pctx, cancel := context.WithTimeout(ctx, rc.connectTimeout)
	defer cancel()
	ranges := stored
	if ranges == nil {
		ranges, err = pipeline.PlanReplay(pctx, adm, rc.topic, rc.partitions, rc.from, rc.to)
		if errors.Is(err, pipeline.ErrUnknownPartition) {
			return nil, usageErr(fmt.Sprintf("%s: %v", flagRef(fPartitionIDs), err))
		}
		if err != nil {
			return nil, unavailableErr(err.Error())
		}
	}
	for _, rg := range ranges {
		log.Info("replay range", "topic", rc.topic, "partition", rg.Partition, "from", rg.From, "to", rg.To, "records", rg.Len())
	}
	risk := ttlRisk{kafkaConn: rc.kafkaConn, topic: rc.topic, ttl: rc.ledgerConfig.ttl, now: rc.now, log: log, what: "the replay"}
	return ranges, risk.check(ctx, adm, ranges, rc.force, rc.dryRun, func() (pipeline.Checker, error) { return chk, nil },
		"pass --force to replay them anyway (they apply again), or start later with --from")
}
