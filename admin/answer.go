package admin

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// answered runs f until Redis answers it (a reply, an error reply too) or
// ctx ends, backing off from 50ms to 1s between tries: a Redis that is
// restarting when a start-up check runs (a consumer restarted during a
// Redis crash) is waited for within the caller's deadline, as the brokers
// are, instead of failing the start. It returns f's last error, or, when
// that is only ctx ending, the one before it (why Redis did not answer:
// connection refused, say). onWait, when not nil, is called once with the
// first error that is asked again.
func answered(ctx context.Context, f func() error, onWait func(error)) error {
	var last error
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		err := f()
		var rerr redis.Error
		switch {
		case err == nil || errors.As(err, &rerr):
			return err
		case ctx.Err() != nil:
			if last != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
				return last
			}
			return err
		}
		if last == nil && onWait != nil {
			onWait(err)
		}
		last = err
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return last
		case <-t.C:
		}
	}
}
