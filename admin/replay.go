package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
)

// PlanMismatchError is a rerun of a replay id given other bounds than its
// first run: resuming the id's checkpoints over another range would skip
// records or mark partitions done with nothing read. It wraps
// pipeline.ErrPlanChanged.
type PlanMismatchError struct {
	// ID is the replay id.
	ID string
	// Stored is the plan the id's first run stored.
	Stored pipeline.StoredPlan
	// Given is how this run describes its bounds (pipeline.PlanGiven).
	Given string
}

// Error names the id, its stored plan and bounds, and this run's bounds.
func (e *PlanMismatchError) Error() string {
	given := e.Stored.Given
	if given == "" {
		given = "bounds it did not record"
	}
	return fmt.Sprintf("replay %q was first run at %s with %s, which planned the ranges (partition:from-to) %s; this run gives %s",
		e.ID, e.Stored.At.UTC().Format(time.RFC3339), given, e.Stored, e.Given)
}

// Unwrap returns pipeline.ErrPlanChanged.
func (e *PlanMismatchError) Unwrap() error { return pipeline.ErrPlanChanged }

// ResumePlan returns the ranges the first run of replay id over topic
// stored under prefix (pipeline.DefaultReplayPrefix when ""), when there is
// one (ok) and this run describes its bounds as that run did (given, as
// pipeline.PlanGiven records it). A rerun should read those ranges again,
// even when a bound is a duration ago, which would plan other ranges now:
// so no record between the checkpoint and a later start is skipped. Other
// bounds under a used id are a *PlanMismatchError; ok false means no run of
// the id stored a plan yet, and the caller plans (pipeline.PlanReplay). A
// Redis request that fails is an *UnreachableError. One Redis round trip.
func ResumePlan(ctx context.Context, rdb redis.UniversalClient, prefix, id, topic, given string) (pipeline.StoredPlan, bool, error) {
	p, ok, err := pipeline.LoadPlan(ctx, rdb, prefix, id, topic)
	if err != nil {
		return p, false, unreachable("redis", "HGETALL", err, err.Error())
	}
	if ok && p.Given != given {
		return p, true, &PlanMismatchError{ID: id, Stored: p, Given: given}
	}
	return p, ok, nil
}
