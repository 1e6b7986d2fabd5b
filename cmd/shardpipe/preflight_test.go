package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/go-redis/v9"
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
			target, err := parseRedis(mr.Addr(), false)
			if err != nil {
				t.Fatal(err)
			}
			rdb := target.client()
			defer rdb.Close()
			err = preflight(context.Background(), []string{broker}, nil, []string{"orders"}, rdb, target.desc, 5*time.Second)
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

// TestParseRedisOptions: a redis:// URL's query options reach the client;
// an unknown one is rejected.
func TestParseRedisOptions(t *testing.T) {
	tests := []struct {
		name, spec string
		cluster    bool
		check      func(t *testing.T, rdb redis.UniversalClient)
		err        string
	}{
		{"url options", "redis://u:secret@h:6380/2?protocol=2&dial_timeout=3s&read_timeout=4s&pool_size=7&max_retries=5&client_name=sp", false,
			func(t *testing.T, rdb redis.UniversalClient) {
				c, ok := rdb.(*redis.Client)
				if !ok {
					t.Fatalf("client %T, want *redis.Client", rdb)
				}
				o := c.Options()
				if o.Addr != "h:6380" || o.Username != "u" || o.Password != "secret" || o.DB != 2 || o.Protocol != 2 ||
					o.DialTimeout != 3*time.Second || o.ReadTimeout != 4*time.Second || o.PoolSize != 7 ||
					o.MaxRetries != 5 || o.ClientName != "sp" || !o.ContextTimeoutEnabled {
					t.Fatalf("options %+v", o)
				}
			}, ""},
		{"rediss", "rediss://h:6380", false, func(t *testing.T, rdb redis.UniversalClient) {
			if o := rdb.(*redis.Client).Options(); o.TLSConfig == nil || o.TLSConfig.ServerName != "h" {
				t.Fatalf("TLS config %+v", o.TLSConfig)
			}
		}, ""},
		{"host:port", "h:6379", false, func(t *testing.T, rdb redis.UniversalClient) {
			if o := rdb.(*redis.Client).Options(); o.Addr != "h:6379" || !o.ContextTimeoutEnabled {
				t.Fatalf("options %+v", o)
			}
		}, ""},
		{"node list", "a:1, b:2", false, func(t *testing.T, rdb redis.UniversalClient) {
			c, ok := rdb.(*redis.ClusterClient)
			if !ok {
				t.Fatalf("client %T, want *redis.ClusterClient", rdb)
			}
			if o := c.Options(); len(o.Addrs) != 2 || !o.ContextTimeoutEnabled {
				t.Fatalf("options %+v", o)
			}
		}, ""},
		{"cluster url options", "redis://h:1?addr=h:2&pool_size=9", true, func(t *testing.T, rdb redis.UniversalClient) {
			if o := rdb.(*redis.ClusterClient).Options(); len(o.Addrs) != 2 || o.PoolSize != 9 {
				t.Fatalf("options %+v", o)
			}
		}, ""},
		{"unknown option", "redis://h:1/0?pool_sise=3", false, nil, "unexpected option: pool_sise"},
		{"unknown cluster option", "redis://h:1?bogus=1", true, nil, "unexpected option: bogus"},
		{"empty list", " , ", false, nil, "no address in the list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, err := parseRedis(tt.spec, tt.cluster)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parseRedis(%q): %v, want an error containing %q", tt.spec, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rdb := target.client()
			defer rdb.Close()
			tt.check(t, rdb)
		})
	}
}
