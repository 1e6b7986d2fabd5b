package bench

import (
	"context"
	"fmt"
	"time"
)

// runNaive is the hand-written consumer: for each record in turn one SETNX
// round trip to Redis and one synchronous offset commit. It stops after
// Records records or Budget, whichever comes first.
func runNaive(ctx context.Context, spec Spec) (Result, error) {
	rdb, err := NewRedis(spec.Redis)
	if err != nil {
		return Result{}, err
	}
	defer rdb.Close()
	cl, clock, err := consumer(spec)
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()
	var (
		n, applied int64
		deadline   time.Time
		value      = claimValue(spec)
	)
	for n < int64(spec.Records) && (deadline.IsZero() || time.Now().Before(deadline)) {
		fs := cl.PollRecords(ctx, 100)
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if err := fetchErr(fs); err != nil {
			return Result{}, err
		}
		if deadline.IsZero() && !fs.Empty() {
			deadline = time.Now().Add(spec.Budget)
		}
		for _, r := range fs.Records() {
			if n >= int64(spec.Records) || (!deadline.IsZero() && time.Now().After(deadline)) {
				break
			}
			ok, err := rdb.SetNX(ctx, spec.Prefix+string(r.Key), value, spec.TTL).Result()
			if err != nil {
				return Result{}, fmt.Errorf("SETNX at %s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
			}
			if ok {
				applied++
			}
			if err := cl.CommitRecords(ctx, r); err != nil {
				return Result{}, fmt.Errorf("commit %s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
			}
			n++
		}
	}
	return Result{Records: n, Seconds: clock.since().Seconds(), Applied: applied}, nil
}
