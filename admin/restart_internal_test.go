package admin

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// firstFailure is a go-redis hook that closes failed when the first
// command (or pipeline) comes back without an answer from Redis.
type firstFailure struct {
	once   sync.Once
	failed chan struct{}
}

func (h *firstFailure) note(err error) {
	var rerr redis.Error
	if err != nil && !errors.As(err, &rerr) {
		h.once.Do(func() { close(h.failed) })
	}
}

func (h *firstFailure) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *firstFailure) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.note(err)
		return err
	}
}
func (h *firstFailure) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.note(err)
		return err
	}
}

// TestChecksWaitForARestartingRedis: a Redis that does not answer yet when
// a start-up check begins (a consumer restarted while Redis restarts) is
// waited for within the check's deadline (--connect-timeout), as the
// brokers are: each check passes once a real redis-server comes up on the
// address, instead of failing the start (exit 3).
func TestChecksWaitForARestartingRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	switch {
	case err != nil && os.Getenv("SHARDPIPE_REQUIRE_INTEGRATION") == "1": // make test installs it
		t.Fatalf("redis-server not found: %v", err)
	case err != nil:
		t.Skipf("redis-server not found: %v", err)
	}
	for _, tc := range []struct {
		name  string
		check func(ctx context.Context, rdb redis.UniversalClient) error
	}{
		{"CheckRedis", func(ctx context.Context, rdb redis.UniversalClient) error { return CheckRedis(ctx, rdb, "test") }},
		{"CheckDurability", func(ctx context.Context, rdb redis.UniversalClient) error {
			_, err := CheckDurability(ctx, rdb, DurabilityConfig{Name: "test"})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := l.Addr().(*net.TCPAddr).Port
			l.Close()
			// Redis comes up only once a command has failed past go-redis's
			// own retries.
			hook := &firstFailure{failed: make(chan struct{})}
			rdb := redis.NewClient(&redis.Options{Addr: l.Addr().String(), DialTimeout: time.Second})
			rdb.AddHook(hook)
			t.Cleanup(func() { _ = rdb.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- tc.check(ctx, rdb) }()
			select {
			case <-hook.failed: // a command met the absent Redis
			case err := <-done:
				t.Fatalf("%s returned %v before any command met the absent Redis", tc.name, err)
			}
			srv := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", t.TempDir(),
				"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--maxmemory-policy", "noeviction")
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
			if err := <-done; err != nil {
				t.Errorf("%s with Redis up after a moment: %v, want it waited for", tc.name, err)
			}
		})
	}
}
