package sink

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// newRedis starts a miniredis and a client for it, both closed by t.Cleanup.
func newRedis(t testing.TB) (*miniredis.Miniredis, redis.UniversalClient) {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	return m, c
}

// fastRetry keeps retry tests quick.
func fastRetry() Backoff {
	return Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond, Attempts: 4}
}

// order makes a record keyed by id with a JSON value.
func order(p int32, off int64, id, customer string, cents int64) Record {
	return Record{
		Topic: "orders", Partition: p, Offset: off, Epoch: 1,
		Key:   []byte(id),
		Value: fmt.Appendf(nil, `{"order_id":%q,"customer":%q,"amount_cents":%d}`, id, customer, cents),
	}
}

func outcomes(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		if r.Err != nil {
			out[i] = "err"
		} else {
			out[i] = r.Outcome.String()
		}
	}
	return out
}

// calls is a go-redis hook that counts what a client sent: commands (a
// pipeline counts once), those that failed, and script calls answered with
// a string (a Guard finding a claim already there: a poll). It signals after
// each, so a test can wait for calls to have happened instead of sleeping.
type calls struct {
	n, failed, polls atomic.Int32
	signal           chan struct{}
}

// watchCalls installs a calls hook on c.
func watchCalls(c redis.UniversalClient) *calls {
	h := &calls{signal: make(chan struct{}, 1)}
	c.AddHook(h)
	return h
}

func (h *calls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *calls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if c, ok := cmd.(*redis.Cmd); ok && err == nil && (cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			if _, s := c.Val().(string); s {
				h.polls.Add(1)
			}
		}
		if !handshake(cmd.Name()) {
			h.note(err)
		}
		return err
	}
}

// handshake reports whether a command is part of a connection's setup.
func handshake(name string) bool {
	switch name {
	case "hello", "client", "auth", "select", "ping":
		return true
	}
	return false
}

func (h *calls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if !handshake(c.Name()) {
				h.note(err)
				return err
			}
		}
		return err
	}
}

func (h *calls) note(err error) {
	h.n.Add(1)
	if err != nil && !errors.Is(err, redis.Nil) {
		h.failed.Add(1)
	}
	select {
	case h.signal <- struct{}{}:
	default:
	}
}

// await waits until cond holds, checking after every call; it fails the
// test after 10s.
func (h *calls) await(t testing.TB, what string, cond func() bool) {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for !cond() {
		select {
		case <-h.signal:
		case <-timer.C:
			t.Fatalf("%s: not within 10s (calls %d, failed %d, polls %d)", what, h.n.Load(), h.failed.Load(), h.polls.Load())
		}
	}
}

// client returns another client of m, closed by t.Cleanup.
func client(t testing.TB, m *miniredis.Miniredis) redis.UniversalClient {
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	return c
}
