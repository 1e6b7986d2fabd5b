package itest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/clusters"
)

// EnvClusterTests turns on the heavy cluster tests (a master killed or a
// slot migrated during a run, a broker of three killed): `make chaos
// CLUSTER=1` sets it. The light ones run in every integration run.
const EnvClusterTests = "SHARDPIPE_CLUSTER_TESTS"

// HeavyCluster skips t unless the heavy cluster tests are on.
func HeavyCluster(t *testing.T) {
	t.Helper()
	if os.Getenv(EnvClusterTests) != "1" {
		t.Skip("a heavy cluster test: set " + EnvClusterTests + "=1 (make chaos CLUSTER=1 does)")
	}
}

// NeedBins skips t (fails it when integration is required) without bins.
func NeedBins(t *testing.T, bins ...string) {
	t.Helper()
	for _, bin := range bins {
		if _, err := exec.LookPath(bin); err != nil {
			msg := "scripts/services.sh needs " + bin + " on PATH for the cluster: " + err.Error()
			if integration.Required() {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// RepoRoot is the repository root, which holds go.mod and
// scripts/services.sh: the nearest directory above the test's own (the
// package's directory, where go test runs it) that holds go.mod, so the
// binary's tests (integration/cmdtest) and the kit's find the same root.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// StartRedisCluster starts a Redis Cluster of the test's own (three
// masters, one replica each, scripts/services.sh) and stops it at cleanup.
func StartRedisCluster(t *testing.T) *clusters.Redis {
	t.Helper()
	NeedBins(t, "redis-server", "redis-cli")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rc, err := clusters.StartRedis(ctx, RepoRoot(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rc.Stop(ctx); err != nil {
			t.Errorf("stop the redis cluster: %v", err)
		}
	})
	return rc
}

// SharedRedisCluster is one Redis Cluster for the light tests of a test
// binary, which use keys of their own: started by the first that asks,
// stopped when the last of them ends (each holds a reference).
var SharedRedisCluster struct {
	mu   sync.Mutex
	rc   *clusters.Redis
	refs int
	dir  string
}

// RedisCluster returns the shared Redis Cluster, starting it when needed.
func RedisCluster(t *testing.T) *clusters.Redis {
	t.Helper()
	NeedBins(t, "redis-server", "redis-cli")
	s := &SharedRedisCluster
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rc == nil {
		dir, err := os.MkdirTemp("", "shardpipe-rcluster-")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		rc, err := clusters.StartRedis(ctx, RepoRoot(t), dir)
		if err != nil {
			t.Fatal(err)
		}
		s.rc, s.dir = rc, dir
	}
	s.refs++
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.refs--; s.refs > 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.rc.Stop(ctx); err != nil {
			t.Errorf("stop the redis cluster: %v", err)
		}
		_ = os.RemoveAll(s.dir)
		s.rc = nil
	})
	return s.rc
}

// ClusterClient is a cluster client of rc, closed at cleanup.
func ClusterClient(t *testing.T, rc *clusters.Redis) *redis.ClusterClient {
	t.Helper()
	c := rc.Client()
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// ClusterKeys returns the keys under prefix on every master, less the
// Prefix, and how many each master holding any holds (by node number).
func ClusterKeys(ctx context.Context, t *testing.T, rc *clusters.Redis, c *redis.ClusterClient, prefix string) (map[string]bool, map[int]int) {
	t.Helper()
	c.ReloadState(ctx) // after a failover: ask the masters of now
	var mu sync.Mutex
	keys, per := map[string]bool{}, map[int]int{}
	err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		it := n.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		got := 0
		for it.Next(ctx) {
			mu.Lock()
			keys[strings.TrimPrefix(it.Val(), prefix)] = true
			mu.Unlock()
			got++
		}
		if got > 0 {
			mu.Lock()
			per[rc.Node(n.Options().Addr)] += got
			mu.Unlock()
		}
		return it.Err()
	})
	if err != nil {
		t.Fatalf("scan %s* on every master: %v", prefix, err)
	}
	return keys, per
}
