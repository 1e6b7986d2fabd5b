package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/otelenv"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/termui"
	"github.com/shardpipe/shardpipe/opshttp"
	"github.com/shardpipe/shardpipe/pgeffect"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

func runCommand() *cli.Command {
	return cliflags.Command(env, &cli.Command{
		Name:  "run",
		Usage: "consume topics in a consumer group into the Redis ledger, effects exactly once",
		UsageText: `shardpipe run --brokers kafka:9092 --topic orders --redis redis:6379 [options]

Examples:
   # orders keyed by order ID; sum amount_cents per customer in the hash shardpipe:totals
   shardpipe run --brokers kafka:9092 --topic orders --redis redis:6379 --effect totals

   # the same from the environment (what docker-compose.yml does)
   SHARDPIPE_BROKERS=kafka:9092 SHARDPIPE_TOPIC=orders SHARDPIPE_REDIS=redis:6379 shardpipe run

   # business key from a JSON field, KIP-848 group protocol, JSON logs
   shardpipe run --topic payments --key-from json:payment_id --group-protocol consumer --log-format json`,
		Description: "Validates every setting, checks that the brokers, the topics and Redis answer within\n" +
			"--connect-timeout, then consumes until SIGINT or SIGTERM, which drain the partitions, commit\n" +
			"and leave the group within --shutdown-timeout. Offsets are committed only past records whose\n" +
			"effects have landed; replays are suppressed by the ledger.",
	}, runAction)
}

func runAction(ctx context.Context, c *cli.Command, rc *runConfig) error {
	log := newLogger(c.Root().ErrWriter, rc.log)
	rdb := rc.redis.Client()
	defer rdb.Close()
	// The readiness probe writes on a client of its own (two connections,
	// dialed on first use), never on the ledger's pool; closed after ops.
	probeRdb := rc.redis.SmallClient(2)
	defer probeRdb.Close()
	ops, err := listenOps(rc.metricsAddr, rdb)
	if err != nil {
		return err
	}
	defer ops.Close()
	// Until the pipeline runs, /readyz answers 503 ("start": what run waits
	// for) and /healthz 200, so an orchestrator sees a process that waits
	// for its servers, not one that hangs.
	ops.Starting(startingDetail(rc), log)
	tr, err := otelenv.Start(ctx, os.Getenv, c.Root().ErrWriter, rdb)
	if err != nil {
		return usageErr(err.Error())
	}
	defer tr.Close()
	// Signals are handled from here on: one during the start-up checks ends
	// run cleanly (exit 0), since nothing is held yet.
	ctx, stop := untilSignal(ctx)
	defer stop()
	barrier, err := rc.start(ctx, rc.kafkaConn, admin.Access{Group: rc.group, Topics: rc.topics}, rdb, true, log)
	if err != nil {
		return interruptedOr(ctx, log, err)
	}
	checkRetention(ctx, rc, log)
	sqlEff, err := rc.openEffect(ctx, rc.ledgerConfig, rc.connectTimeout, log)
	if err != nil {
		return interruptedOr(ctx, log, err)
	}
	defer sqlEff.close()
	p, err := newPipeline(rc, rdb, log, barrier, sqlEff.eff, append(ops.Options(), tr.Options()...)...)
	if err != nil {
		return failure(err)
	}
	probeOpts := []opshttp.Opt{opshttp.Redis(probeRdb, opshttp.HealthKey(rc.dlqPrefix)), opshttp.Group(rc.group)}
	if sqlEff.pool != nil {
		probeOpts = append(probeOpts, opshttp.Dependency("postgres", "PostgreSQL at "+rc.sql.Desc, sqlEff.pool.Ping))
	}
	ops.Start(p.Stats, opshttp.New(p, probeOpts...), log)
	rep := termui.NewRunReport(p, rc.group, rc.topics, log)
	repDone := make(chan struct{})
	repCtx, repStop := context.WithCancel(context.Background())
	go func() { defer close(repDone); rep.Loop(repCtx, rc.log.reportInterval) }()
	idleDone := make(chan struct{})
	go func() { defer close(idleDone); explainNoPartitions(repCtx, p, rc, log) }()
	if ctx, err = withFaultPoints(ctx); err == nil {
		err = p.Run(ctx)
	}
	repStop()
	<-repDone
	<-idleDone
	rep.Final()
	if err := poisonStorm(err); err != nil {
		return err
	}
	if err := sharedPrefix("run", err, rc.ledgerConfig); err != nil {
		return err
	}
	if err != nil {
		return failure(fmt.Errorf("run: %w", err))
	}
	return nil
}

// newPipeline builds the sink (effectConfig.applier: the ledger, or guard
// mode for --effect http and, around sqlEff, --effect sql) and the pipeline from rc. barrier, when not nil, runs before every commit
// (redisDurability); extra are added (opshttp.Ops.Options).
func newPipeline(rc *runConfig, rdb redis.UniversalClient, log *slog.Logger, barrier pipeline.Barrier, sqlEff *pgeffect.Effect, extra ...pipeline.Opt) (*pipeline.Pipeline, error) {
	ledger, err := rc.applier(rc.ledgerConfig, sqlEff, rc.topics, rdb, log)
	if err != nil {
		return nil, err
	}
	popts := []pipeline.GroupOpt{pipeline.Brokers(rc.brokers...), pipeline.KafkaOptions(rc.opts...),
		pipeline.Topics(rc.topics...), pipeline.Group(rc.group), pipeline.Sink(ledger),
		pipeline.GroupProtocol(rc.protocol), pipeline.ShutdownTimeout(rc.shutdownTimeout),
		pipeline.SessionTimeout(rc.sessionTimeout), pipeline.InstanceID(rc.instanceID),
		pipeline.Options(rc.commitConfig.options(rc.maxBatch, barrier, log)...),
		pipeline.Options(rc.poisonConfig.options(rdb, rc.ledgerConfig)...),
		pipeline.Options(rc.inflight.options()...), pipeline.Options(extra...)}
	if rc.startLatest {
		popts = append(popts, pipeline.StartAtLatest())
	}
	// applied counts each order once over the group's life, also after a
	// reset-offsets back (the marks live beside the dead-letter markers).
	popts = append(popts, pipeline.CountOnce(sink.NewCommitMarks(rdb, rc.poisonConfig.p.Prefix)))
	p, err := pipeline.New(popts...)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return p, nil
}

// newLogger returns a text or JSON slog logger on w.
func newLogger(w io.Writer, lc logConfig) *slog.Logger {
	o := &slog.HandlerOptions{Level: lc.level}
	if lc.format == "json" {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}

// interruptedOr returns nil when a signal ended ctx (the start-up checks were
// cut short, nothing was held), else err.
func interruptedOr(ctx context.Context, log *slog.Logger, err error) error {
	if ctx.Err() != nil {
		log.Info("interrupted before the pipeline started; nothing to drain")
		return nil
	}
	return err
}
