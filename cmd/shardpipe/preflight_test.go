package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2/server"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
)

// TestPreflightRedisServer: preflight reads INFO from Redis (miniredis
// answers the sections a test gives it): a version before 7.0 is exit 3, a
// cluster node given as one node is exit 2, and a server that refuses INFO
// is not checked.
func TestPreflightRedisServer(t *testing.T) {
	broker, _, mr := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "1"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	tests := []struct {
		name          string
		server, clust string // INFO sections; "" refuses the section
		code          int    // 0: no error
		want          string
	}{
		{"7.0.15", "redis_version:7.0.15", "cluster_enabled:0", 0, ""},
		{"8.0.2", "redis_version:8.0.2", "cluster_enabled:0", 0, ""},
		{"INFO refused", "", "", 0, ""},
		{"6.2.14", "redis_version:6.2.14", "cluster_enabled:0", exitUnavailable,
			"redis " + mr.Addr() + ": version 6.2.14 is too old: shardpipe needs Redis 7.0 or newer (SET NX GET)"},
		{"cluster node", "redis_version:7.0.15", "cluster_enabled:1", exitUsage,
			"redis " + mr.Addr() + ": the server is a Redis Cluster node (cluster_enabled:1); pass --redis-cluster (SHARDPIPE_REDIS_CLUSTER)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mr.Server().SetPreHook(func(c *server.Peer, cmd string, args ...string) bool {
				if cmd != "INFO" || len(args) != 1 {
					return false
				}
				body := map[string]string{"server": tt.server, "cluster": tt.clust}[strings.ToLower(args[0])]
				if body == "" {
					c.WriteError("NOPERM this user has no permissions to run the 'info' command")
				} else {
					c.WriteBulk("# Section\r\n" + body + "\r\n")
				}
				return true
			})
			defer mr.Server().SetPreHook(nil)
			target, err := flagcheck.ParseRedis(mr.Addr(), false)
			if err != nil {
				t.Fatal(err)
			}
			rdb := target.Client()
			defer rdb.Close()
			err = preflight(context.Background(), kafkaConn{brokers: []string{broker}}, []string{"orders"}, rdb, target.Desc, 5*time.Second,
				slog.New(slog.NewTextHandler(io.Discard, nil)))
			if tt.code == 0 {
				if err != nil {
					t.Fatalf("preflight: %v", err)
				}
				return
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != tt.code {
				t.Fatalf("preflight: %v, want exit %d", err, tt.code)
			}
			if len(ee.lines) != 1 || !strings.Contains(ee.lines[0], tt.want) {
				t.Fatalf("lines %q, want one containing %q", ee.lines, tt.want)
			}
		})
	}
}
