package admin_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/integration"
)

// TestCheckRedisKeys: on the real Redis, an ACL user whose rule does not
// cover the key is refused (NOPERM) at start, an *UnreachableError naming
// the request; a Redis that does not answer (down, restarting) is no
// access problem: it is left to the pipeline, which waits for Redis, so a
// consumer restarted during a Redis crash does not exit.
func TestCheckRedisKeys(t *testing.T) {
	addr := integration.Redis(t)
	rdb := integration.NewRedisClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	user := "sp-checkkeys-" + integration.Group(t)
	if err := rdb.Do(ctx, "ACL", "SETUSER", user, "on", ">pw", "~allowed:*", "+exists", "+ping", "+hello", "+auth").Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() { _ = rdb.Do(context.Background(), "ACL", "DELUSER", user).Err() })
	limited := redis.NewClient(&redis.Options{Addr: addr, Username: user, Password: "pw"})
	t.Cleanup(func() { _ = limited.Close() })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := redis.NewClient(&redis.Options{Addr: l.Addr().String(), MaxRetries: -1, DialTimeout: time.Second})
	l.Close()
	t.Cleanup(func() { _ = down.Close() })
	for _, tc := range []struct {
		name    string
		rdb     redis.UniversalClient
		key     string
		refused bool
	}{
		{"key the rule covers", limited, "allowed:ledger:x", false},
		{"key the rule does not cover", limited, "other:ledger:x", true},
		{"redis down", down, "allowed:ledger:x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := admin.CheckRedisKeys(ctx, tc.rdb, "test", tc.key)
			if got := errors.Is(err, admin.ErrUnreachable); got != tc.refused {
				t.Errorf("CheckRedisKeys(%s) = %v; refused %v, want %v", tc.key, err, got, tc.refused)
			}
		})
	}
}
