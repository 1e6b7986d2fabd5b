package bench

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// runPipeline runs shardpipe with its default settings (in the guard
// modes: guard mode with the HTTP effect; in the SQL mode: the SQL effect
// as run builds it) over the topic until every record's effect landed.
// Replay expects every key to be claimed already; the parent checks the
// counts.
func runPipeline(ctx context.Context, spec Spec, log *slog.Logger) (Result, error) {
	rdb, err := NewRedis(spec.Redis)
	if err != nil {
		return Result{}, err
	}
	defer rdb.Close()
	var a pipeline.Applier
	switch {
	case isGuard(spec.Mode):
		a, err = guardApplier(rdb, spec)
	case isSQLEffect(spec.Mode):
		var closeDB func()
		if a, closeDB, err = sqlApplier(ctx, rdb, spec, log); err == nil {
			defer closeDB() // after the pipeline's Close below
		}
	default:
		opts := []sink.LedgerOpt{sink.WithPrefix(spec.Prefix), sink.WithTTL(spec.TTL)}
		if spec.Mode == Totals {
			opts = append(opts, sink.WithEffect(totals(spec.Prefix)))
		}
		a, err = sink.NewLedger(rdb, opts...)
	}
	if err != nil {
		return Result{}, err
	}
	t := newTimed(a, int64(spec.Records), false)
	var outer pipeline.Applier = t
	if isSQLEffect(spec.Mode) {
		outer = seeThrough{t}
	}
	popts := []pipeline.GroupOpt{pipeline.Brokers(spec.Brokers...), pipeline.KafkaOptions(spec.kafka...), pipeline.Topics(spec.Topic),
		pipeline.Group(spec.Group), pipeline.Sink(outer), pipeline.Logger(log), pipeline.Observe(t.observe)}
	if spec.CommitEvery > 0 {
		popts = append(popts, pipeline.CommitEvery(spec.CommitEvery))
	}
	if spec.MaxInFlight > 0 {
		popts = append(popts, pipeline.MaxInFlight(spec.MaxInFlight))
	}
	p, err := pipeline.New(popts...)
	if err != nil {
		return Result{}, err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- p.Run(ctx) }()
	select {
	case <-t.done:
	case err := <-runErr:
		return Result{}, fmt.Errorf("pipeline stopped after %d of %d records: %v", t.landed.Load(), spec.Records, err)
	case <-ctx.Done():
		_ = p.Close(context.Background())
		return Result{}, ctx.Err()
	}
	// The guard modes' queues hold records behind a slow receiver: their
	// drain is not measured nor waited for (the round's keys are cleaned).
	wait := 30 * time.Second
	if isGuard(spec.Mode) {
		wait = time.Second
	}
	cctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := p.Close(cctx); err != nil && !isGuard(spec.Mode) {
		return Result{}, fmt.Errorf("close: %w", err)
	}
	return Result{Records: t.landed.Load(), Seconds: t.seconds(),
		Applied: t.applied.Load(), Suppressed: t.suppressed.Load()}, nil
}
