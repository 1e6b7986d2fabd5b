package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumer returns a franz-go group consumer reading topic from the start,
// with the pipeline's isolation level and no automatic commits, and a clock
// that starts when the group assigns it partitions: every mode is timed from
// its assignment, so the group join does not count.
func consumer(spec Spec) (*kgo.Client, *startClock, error) {
	clock := &startClock{}
	cl, err := kgo.NewClient(spec.seeds(kgo.ConsumerGroup(spec.Group),
		kgo.ConsumeTopics(spec.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { clock.start() }))...)
	if err != nil {
		return nil, nil, fmt.Errorf("kafka client: %w", err)
	}
	return cl, clock, nil
}

// startClock notes the first time start is called.
type startClock struct{ nanos atomic.Int64 }

func (c *startClock) start() { c.nanos.CompareAndSwap(0, time.Now().UnixNano()) }

// since is the time from the start to now.
func (c *startClock) since() time.Duration {
	return time.Duration(time.Now().UnixNano() - c.nanos.Load())
}

// runConsume is the consume ceiling: poll until Records records arrived,
// doing nothing with them.
func runConsume(ctx context.Context, spec Spec) (Result, error) {
	cl, clock, err := consumer(spec)
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()
	var (
		n   int64
		sum int // touch every value, as any consumer would
	)
	for n < int64(spec.Records) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if err := fetchErr(fs); err != nil {
			return Result{}, err
		}
		fs.EachRecord(func(r *kgo.Record) { n++; sum += len(r.Value) })
	}
	elapsed := clock.since()
	if sum == 0 {
		return Result{}, fmt.Errorf("%d records with empty values", n)
	}
	return Result{Records: n, Seconds: elapsed.Seconds()}, nil
}

// fetchErr returns the first fetch error that is not a cancellation.
func fetchErr(fs kgo.Fetches) error {
	var first error
	fs.EachError(func(t string, p int32, err error) {
		if first == nil {
			first = fmt.Errorf("fetch %s/%d: %w", t, p, err)
		}
	})
	return first
}
