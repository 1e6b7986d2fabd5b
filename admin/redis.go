package admin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// The oldest Redis the ledger runs on: record mode uses SET ... NX GET.
const minRedisMajor, minRedisMinor = 7, 0

// CheckRedis checks that rdb answers PING and that every primary shardpipe
// writes to can hold the ledger: Redis 7.0 or newer (a *CheckError wrapping
// ErrRedisVersion), and, behind a single-node client, not a Redis Cluster
// node (ErrClusterNode: writes to keys on other nodes would fail with
// MOVED). A server that refuses INFO (an ACL without +info, a
// Redis-compatible server without the section) is not checked. name is how
// errors call rdb when PING fails (a URL without its password, say); ""
// uses the client's address. A Redis that does not answer PING yet (down,
// restarting) is asked again until ctx ends: give ctx the start-up
// deadline.
//
// It returns nil, or the problems joined (errors.Join), one per node and
// check; a request that failed is an *UnreachableError. It costs a PING,
// then one INFO per primary (two behind a single-node client), the
// primaries of a cluster asked concurrently. OnWait, among opts, says when
// it starts waiting.
func CheckRedis(ctx context.Context, rdb redis.UniversalClient, name string, opts ...CheckOpt) error {
	if name == "" {
		name = clientName(rdb)
	}
	var cfg checkConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := answered(ctx, func() error { return rdb.Ping(ctx).Err() }, cfg.onWait); err != nil {
		return unreachable("redis "+name, "PING", err, fmt.Sprintf("redis %s: PING failed: %v", name, err))
	}
	var (
		mu   sync.Mutex
		errs []error
	)
	check := func(ctx context.Context, c *redis.Client, single bool) error {
		e := checkRedisNode(ctx, c, c.Options().Addr, single)
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, e...)
		return nil
	}
	switch c := rdb.(type) {
	case *redis.Client:
		_ = check(ctx, c, true)
	case *redis.ClusterClient:
		if err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return check(ctx, n, false) }); err != nil {
			errs = append(errs, unreachable("redis cluster", "CLUSTER SLOTS", err,
				fmt.Sprintf("redis cluster: reading the nodes failed: %v", err)))
		}
	}
	return errors.Join(errs...)
}

// clientName is a client's address for messages.
func clientName(rdb redis.UniversalClient) string {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().Addr
	case *redis.ClusterClient:
		return strings.Join(c.Options().Addrs, ",")
	}
	return "(redis)"
}

// checkRedisNode checks one node's version and, when it was given as a
// single node, that it is not a cluster node.
func checkRedisNode(ctx context.Context, c *redis.Client, addr string, single bool) []error {
	var errs []error
	info, err := redisInfo(ctx, c, "server")
	switch {
	case errors.Is(err, errNoInfo):
		info = nil // not checked
	case err != nil:
		return []error{infoUnreachable(addr, "server", err)}
	}
	if v, ok := info["redis_version"]; ok {
		if okVer, perr := versionAtLeast(v, minRedisMajor, minRedisMinor); perr == nil && !okVer {
			need := fmt.Sprintf("%d.%d", minRedisMajor, minRedisMinor)
			errs = append(errs, &CheckError{Server: "redis " + addr, Setting: "redis_version", Value: v,
				Fix: "Redis " + need + " or newer", Err: ErrRedisVersion,
				msg: fmt.Sprintf("redis %s: version %s is too old: shardpipe needs Redis %s or newer (SET NX GET)", addr, v, need)})
		}
	}
	if !single {
		return errs
	}
	info, err = redisInfo(ctx, c, "cluster")
	switch {
	case errors.Is(err, errNoInfo):
		return errs // not checked
	case err != nil:
		return append(errs, infoUnreachable(addr, "cluster", err))
	}
	if info["cluster_enabled"] == "1" {
		errs = append(errs, &CheckError{Server: "redis " + addr, Setting: "cluster_enabled", Value: "1",
			Fix: "use a cluster client (redis.ClusterClient) or list the nodes", Err: ErrClusterNode,
			msg: fmt.Sprintf("redis %s: the server is a Redis Cluster node (cluster_enabled:1); use a cluster client, or writes to keys on other nodes fail with MOVED", addr)})
	}
	return errs
}

func infoUnreachable(addr, section string, err error) *UnreachableError {
	return unreachable("redis "+addr, "INFO "+section, err, fmt.Sprintf("redis %s: INFO %s failed: %v", addr, section, err))
}

// errNoInfo marks a server that answered INFO with an error reply.
var errNoInfo = errors.New("INFO refused")

// redisInfo returns the fields of one INFO section. A server error reply
// (no permission, unknown section) gives errNoInfo.
func redisInfo(ctx context.Context, c *redis.Client, section string) (map[string]string, error) {
	text, err := c.Info(ctx, section).Result()
	var rerr redis.Error
	switch {
	case errors.As(err, &rerr):
		return nil, fmt.Errorf("%w: %w", errNoInfo, err)
	case err != nil:
		return nil, err
	}
	return parseInfo(text), nil
}

// parseInfo reads INFO's "field:value" lines; comments and blank lines are
// skipped.
func parseInfo(text string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// versionAtLeast reports whether version ("7.0.15", "6.2.14", "8.0-m01")
// is major.minor or newer.
func versionAtLeast(version string, major, minor int) (bool, error) {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false, fmt.Errorf("version %q: want major.minor[.patch]", version)
	}
	maj, err := strconv.Atoi(parts[0])
	if err != nil {
		return false, fmt.Errorf("version %q: major: %w", version, err)
	}
	minStr := parts[1]
	if i := strings.IndexFunc(minStr, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minStr = minStr[:i]
	}
	mnr, err := strconv.Atoi(minStr)
	if err != nil {
		return false, fmt.Errorf("version %q: minor: %w", version, err)
	}
	if maj != major {
		return maj > major, nil
	}
	return mnr >= minor, nil
}
