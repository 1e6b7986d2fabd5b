package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

func runCommand() *cli.Command {
	return &cli.Command{
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
		Flags:  runFlags(),
		Action: runAction,
	}
}

func runAction(ctx context.Context, c *cli.Command) error {
	rc, err := loadRunConfig(c)
	if err != nil {
		return err
	}
	log := newLogger(c.Root().ErrWriter, rc.logFormat, rc.logLevel)
	rdb := rc.redis.client()
	defer rdb.Close()
	// Signals are handled from here on: one during the start-up checks ends
	// run cleanly (exit 0), since nothing is held yet.
	ctx, stop := untilSignal(ctx)
	defer stop()
	if err := preflight(ctx, rc.brokers, rc.topics, rdb, rc.redis.desc, rc.connectTimeout); err != nil {
		return interruptedOr(ctx, log, err)
	}
	if err := checkRunTopics(ctx, rc, log); err != nil {
		return interruptedOr(ctx, log, err)
	}
	barrier, err := redisDurability(ctx, rdb, rc.redis.desc, rc.durability, fenceKey(rc.dlqPrefix), rc.connectTimeout, log)
	if err != nil {
		return interruptedOr(ctx, log, err)
	}
	var obs *observability
	var extra []pipeline.Opt
	if rc.metricsAddr != "" {
		obs = newObservability(rdb)
		extra = obs.options()
	}
	p, err := newPipeline(rc, rdb, log, barrier, extra...)
	if err != nil {
		return failure(err)
	}
	if obs != nil {
		mctx, mstop := context.WithCancel(context.Background())
		_, served, err := obs.serve(mctx, rc.metricsAddr, p, rdb, healthKey(rc.dlqPrefix), rc.group, log)
		if err != nil {
			mstop()
			_ = p.Close(context.Background())
			return failure(err)
		}
		defer func() { mstop(); <-served }()
	}
	rep := newReporter(p, rc.group, rc.topics, log)
	repDone := make(chan struct{})
	repCtx, repStop := context.WithCancel(context.Background())
	go func() { defer close(repDone); rep.loop(repCtx, rc.reportInterval) }()
	err = p.Run(ctx)
	repStop()
	<-repDone
	rep.final()
	if err != nil {
		return failure(fmt.Errorf("run: %w", err))
	}
	return nil
}

// newPipeline builds the sink (the ledger, or guard mode for --effect http)
// and the pipeline from rc. barrier, when not nil, runs before every commit
// (redisDurability).
func newPipeline(rc runConfig, rdb redis.UniversalClient, log *slog.Logger, barrier pipeline.Barrier, extra ...pipeline.Opt) (*pipeline.Pipeline, error) {
	var ledger pipeline.Applier
	var err error
	if rc.httpEffect {
		ledger, err = newHTTPGuarded(rc.ledgerConfig, rc.http, rc.topics, rdb, log)
	} else {
		ledger, err = newApplier(rc.ledgerConfig, rc.topics, rdb, log)
	}
	if err != nil {
		return nil, err
	}
	popts := []pipeline.GroupOpt{
		pipeline.Brokers(rc.brokers...), pipeline.Topics(rc.topics...), pipeline.Group(rc.group),
		pipeline.Sink(ledger), pipeline.GroupProtocol(rc.protocol),
		pipeline.CommitEvery(rc.commitEvery), pipeline.CommitInterval(rc.commitInterval),
		pipeline.MaxUncommitted(rc.maxUncommitted), pipeline.MaxBatch(rc.maxBatch),
		pipeline.ShutdownTimeout(rc.shutdownTimeout), pipeline.SessionTimeout(rc.sessionTimeout),
		pipeline.Logger(log),
	}
	if rc.startLatest {
		popts = append(popts, pipeline.StartAtLatest())
	}
	popts = append(popts, rc.groupOptions()...)
	if barrier != nil {
		popts = append(popts, pipeline.BeforeCommit(barrier))
	}
	for _, o := range append(rc.poisonConfig.options(rdb, rc.ledgerConfig), extra...) {
		popts = append(popts, o)
	}
	p, err := pipeline.New(popts...)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return p, nil
}

// newLedger builds the ledger of topic's records from lc (any topic's in a
// shared key space).
func newLedger(lc ledgerConfig, topic string, rdb redis.UniversalClient, log *slog.Logger) (*sink.Ledger, error) {
	sopts := []sink.LedgerOpt{sink.WithPrefix(lc.prefixFor(topic)), sink.WithTTL(lc.ttl), sink.WithKeySource(lc.keys),
		sink.WithLogger(log)}
	if lc.totals != nil {
		sopts = append(sopts, sink.WithEffect(*lc.totals))
	}
	ledger, err := sink.NewLedger(rdb, sopts...)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return ledger, nil
}

// newLogger returns a text or JSON slog logger on w.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	o := &slog.HandlerOptions{Level: level}
	if format == "json" {
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
