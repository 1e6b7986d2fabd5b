package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/termui"
	"github.com/shardpipe/shardpipe/pipeline"
)

// storedPlan returns (admin.ResumePlan) the ranges the first run of --id stored, when there was
// one and this run gives the same range flags: a rerun reads those ranges
// again, even when --from or --to is a duration ago (which would plan other
// ranges now), so records between the checkpoint and a later start are not
// skipped. Other range flags under a used id are refused (exit 2): resuming
// its checkpoints over another range would skip records or mark partitions
// done with nothing read. nil means no run of the id stored a plan yet.
func storedPlan(ctx context.Context, rc *replayConfig, rdb redis.UniversalClient, log *slog.Logger) ([]pipeline.Range, error) {
	lctx, cancel := context.WithTimeout(ctx, rc.connectTimeout)
	defer cancel()
	p, ok, err := admin.ResumePlan(lctx, rdb, rc.checkpointPrefix, rc.id, rc.topic, rc.given)
	if pm := (*admin.PlanMismatchError)(nil); errors.As(err, &pm) {
		if flagcheck.SameGiven(pm.Stored.Given, rc.given) { // stored before --partitions was renamed
			p, ok, err = pm.Stored, true, nil
		} else {
			pm.Stored.Given = flagcheck.CurrentGiven(pm.Stored.Given)
		}
	}
	switch {
	case errors.Is(err, pipeline.ErrPlanChanged): // an *admin.PlanMismatchError naming the id, its stored plan and this run's bounds
		return nil, usageErr(err.Error(),
			"a rerun of an id continues its stored ranges and needs the same --from, --to and --partition-ids; use a new --id to replay another range")
	case err != nil:
		return nil, unavailableErr(err.Error())
	case !ok:
		return nil, nil
	}
	p.Given = flagcheck.CurrentGiven(p.Given)
	termui.LogResumedPlan(log, rc.id, rc.topic, p)
	return p.Ranges, nil
}
