package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Ceiling shape: as many concurrent pipelines as the topic has partitions
// (one per pipeline worker), each of the pipeline's default batch size.
const (
	ceilingStreams = 12
	ceilingBatch   = 500
)

// runSink is the sink ceiling: SET prefix+Key(i) v NX EX ttl for the same
// keys the topic holds, pipelined, no Kafka; v is a claim of the size the
// pipeline writes (claimValue).
func runSink(ctx context.Context, spec Spec) (Result, error) {
	rdb, err := NewRedis(spec.Redis)
	if err != nil {
		return Result{}, err
	}
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return Result{}, fmt.Errorf("redis ping: %w", err)
	}
	value := claimValue(spec)
	return inStreams(spec, func(s int) (int64, error) { return setStream(ctx, rdb, spec, value, s) })
}

// inStreams runs stream(s) for each of the ceilingStreams streams at once
// and returns how many records they applied in how long: the shape of both
// Redis ceilings.
func inStreams(spec Spec, stream func(s int) (applied int64, err error)) (Result, error) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		errs    []error
		applied int64
	)
	start := time.Now()
	for s := range ceilingStreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := stream(s)
			mu.Lock()
			defer mu.Unlock()
			applied += n
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(errs) > 0 {
		return Result{}, errs[0]
	}
	return Result{Records: int64(spec.Records), Seconds: elapsed.Seconds(), Applied: applied}, nil
}

// setStream writes value at keys s, s+streams, s+2*streams, ... in
// pipelined batches and counts the keys it set.
func setStream(ctx context.Context, rdb *redis.Client, spec Spec, value string, s int) (int64, error) {
	var set int64
	cmds := make([]*redis.BoolCmd, 0, ceilingBatch)
	p := rdb.Pipeline()
	flush := func() error {
		if _, err := p.Exec(ctx); err != nil {
			return fmt.Errorf("pipelined SET NX: %w", err)
		}
		for _, c := range cmds {
			if c.Val() {
				set++
			}
		}
		cmds = cmds[:0]
		return nil
	}
	for i := s; i < spec.Records; i += ceilingStreams {
		cmds = append(cmds, p.SetNX(ctx, spec.Prefix+Key(i), value, spec.TTL))
		if len(cmds) == ceilingBatch {
			if err := flush(); err != nil {
				return set, err
			}
		}
	}
	if len(cmds) > 0 {
		return set, flush()
	}
	return set, nil
}
