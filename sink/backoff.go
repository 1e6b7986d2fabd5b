package sink

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
)

// Backoff is a capped exponential backoff: retry n waits up to
// Ceiling(n) = min(Initial*2^(n-1), Max). It is the one backoff of the
// module: the sinks retry Redis errors with it (WithRetry), waiting Delay,
// a jittered share of the ceiling, and the pipeline paces its own retries
// (a batch whose effects are unknown, a failed commit, a poison record, a
// dead-letter write) by the ceiling itself.
type Backoff struct {
	// Initial is the ceiling of the first retry's wait; positive.
	Initial time.Duration
	// Max caps every wait; at least Initial.
	Max time.Duration
	// Attempts counts tries, the first one included; at least 1 where a
	// limit applies (WithRetry: round trips per call).
	Attempts int
}

func (b Backoff) validate() error {
	switch {
	case b.Initial <= 0:
		return fmt.Errorf("backoff initial %v is not positive", b.Initial)
	case b.Max < b.Initial:
		return fmt.Errorf("backoff max %v is below initial %v", b.Max, b.Initial)
	case b.Attempts < 1:
		return fmt.Errorf("backoff attempts %d is below 1", b.Attempts)
	}
	return nil
}

// Ceiling returns the longest wait before retry n (n >= 1):
// min(Initial*2^(n-1), Max). It costs at most log2(Max/Initial) doublings.
func (b Backoff) Ceiling(n int) time.Duration {
	d := b.Initial
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Delay returns the wait before retry n (n >= 1): between half and all of
// Ceiling(n), at random, so that the retries of many clients spread out.
func (b Backoff) Delay(n int) time.Duration {
	d := b.Ceiling(n)
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryable reports whether err is a transient Redis condition: a network
// or I/O failure, a timeout, or a server reply of LOADING, READONLY,
// CLUSTERDOWN, TRYAGAIN, MASTERDOWN, NOREPLICAS, BUSY or max clients.
// Other server replies (WRONGTYPE, script errors, ...) are final, as are a
// closed client and an ended context.
func retryable(err error) bool {
	switch {
	case err == nil, errors.Is(err, redis.Nil), errors.Is(err, redis.ErrClosed),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return true // network, I/O, pool timeout
	}
	return redis.IsLoadingError(err) || redis.IsReadOnlyError(err) ||
		redis.IsClusterDownError(err) || redis.IsTryAgainError(err) ||
		redis.IsMasterDownError(err) || redis.IsMaxClientsError(err) ||
		redis.IsNoReplicasError(err) || redis.HasErrorPrefix(err, "BUSY")
}
