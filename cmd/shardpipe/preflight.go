package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// adminClient returns a Kafka client for admin requests whose dials and
// retries end within the context's deadline.
func adminClient(brokers []string) (*kgo.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DialTimeout(3*time.Second),
		kgo.RetryTimeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", strings.Join(brokers, ","), err)
	}
	return cl, nil
}

// preflight checks, concurrently and within timeout, that the brokers
// answer, that every topic exists, that Redis answers PING and that the Redis
// server can run the ledger (version, cluster mode). It returns an
// unavailable error with one line per problem, or a usage error when only
// the settings are wrong for the server (a cluster node given as one node).
func preflight(ctx context.Context, brokers, topics []string, rdb redis.UniversalClient, redisDesc string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		wg            sync.WaitGroup
		kErr          []string
		rUnav, rUsage []string
	)
	wg.Go(func() { kErr = checkTopics(ctx, brokers, topics, timeout) })
	if rdb != nil {
		wg.Go(func() {
			switch err := rdb.Ping(ctx).Err(); {
			case errors.Is(err, context.DeadlineExceeded):
				rUnav = []string{fmt.Sprintf("redis %s: no answer to PING within %v", redisDesc, timeout)}
			case err != nil:
				rUnav = []string{fmt.Sprintf("redis %s: PING failed: %v", redisDesc, err)}
			default:
				rUnav, rUsage = checkRedisServer(ctx, rdb, timeout)
			}
		})
	}
	wg.Wait()
	lines := append(kErr, rUnav...)
	if len(lines) > 0 {
		return unavailableErr(append(lines, rUsage...)...)
	}
	if len(rUsage) > 0 {
		return usageErr(rUsage...)
	}
	return nil
}

// Minimum Redis version: the ledger's record mode uses SET ... NX GET.
const minRedisMajor, minRedisMinor = 7, 0

// checkRedisServer reads INFO from every node shardpipe writes to: a version
// older than 7.0 is unavailable; a cluster node addressed as a single node is
// a usage problem (keys on other nodes would fail with MOVED). A server that
// refuses INFO (an ACL without +info, a Redis-compatible server without the
// section) is not checked.
func checkRedisServer(ctx context.Context, rdb redis.UniversalClient, timeout time.Duration) (unavailable, usage []string) {
	var mu sync.Mutex
	check := func(ctx context.Context, c *redis.Client, single bool) error {
		addr := c.Options().Addr
		u, s := checkRedisNode(ctx, c, addr, single, timeout)
		mu.Lock()
		defer mu.Unlock()
		unavailable, usage = append(unavailable, u...), append(usage, s...)
		return nil
	}
	switch c := rdb.(type) {
	case *redis.Client:
		_ = check(ctx, c, true)
	case *redis.ClusterClient:
		if err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return check(ctx, n, false) }); err != nil {
			unavailable = append(unavailable, fmt.Sprintf("redis cluster: reading the nodes failed: %v", err))
		}
	}
	return unavailable, usage
}

// checkRedisNode checks one node's version and, when it was given as a
// single node, that it is not a cluster node.
func checkRedisNode(ctx context.Context, c *redis.Client, addr string, single bool, timeout time.Duration) (unavailable, usage []string) {
	info, err := redisInfo(ctx, c, "server")
	switch {
	case errors.Is(err, errNoInfo):
		info = nil // not checked
	case err != nil:
		return []string{infoProblem(addr, "server", timeout, err)}, nil
	}
	if v, ok := info["redis_version"]; ok {
		if okVer, perr := versionAtLeast(v, minRedisMajor, minRedisMinor); perr == nil && !okVer {
			unavailable = append(unavailable, fmt.Sprintf("redis %s: version %s is too old: shardpipe needs Redis %d.%d or newer (SET NX GET)",
				addr, v, minRedisMajor, minRedisMinor))
		}
	}
	if !single {
		return unavailable, nil
	}
	info, err = redisInfo(ctx, c, "cluster")
	switch {
	case errors.Is(err, errNoInfo):
		return unavailable, nil // not checked
	case err != nil:
		return append(unavailable, infoProblem(addr, "cluster", timeout, err)), nil
	}
	if info["cluster_enabled"] == "1" {
		usage = append(usage, fmt.Sprintf("redis %s: the server is a Redis Cluster node (cluster_enabled:1); pass %s or list the nodes, or writes to keys on other nodes fail with MOVED",
			addr, flagRef(fRedisCluster)))
	}
	return unavailable, usage
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

// infoProblem words an INFO that got no answer.
func infoProblem(addr, section string, timeout time.Duration, err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("redis %s: no answer to INFO %s within %v", addr, section, timeout)
	}
	return fmt.Sprintf("redis %s: INFO %s failed: %v", addr, section, err)
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

// checkTopics returns a line when no broker answers, and one per missing
// topic.
func checkTopics(ctx context.Context, brokers, topics []string, timeout time.Duration) []string {
	_, missing, err := topicPartitions(ctx, brokers, topics)
	if err != nil {
		return []string{brokerProblem(brokers, timeout, err)}
	}
	var lines []string
	for _, t := range missing {
		lines = append(lines, fmt.Sprintf("kafka: topic %q does not exist (create it, or let 'shardpipe produce --partitions N' create it)", t))
	}
	return lines
}

// brokerProblem words a failure to reach the brokers.
func brokerProblem(brokers []string, timeout time.Duration, err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("kafka %s: no broker answered within %v", strings.Join(brokers, ","), timeout)
	}
	return fmt.Sprintf("kafka %s: cannot reach a broker: %v", strings.Join(brokers, ","), err)
}

// topicPartitions returns the partition count of each existing topic and
// the names of the missing ones. err is set when no broker answers.
func topicPartitions(ctx context.Context, brokers, topics []string) (map[string]int, []string, error) {
	cl, err := adminClient(brokers)
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, topics...)
	if err != nil {
		return nil, nil, err
	}
	found := make(map[string]int)
	var missing []string
	for _, t := range topics {
		td, ok := md.Topics[t]
		switch {
		case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
			missing = append(missing, t)
		case td.Err != nil:
			return nil, nil, fmt.Errorf("topic %q: %w", t, td.Err)
		default:
			found[t] = len(td.Partitions)
		}
	}
	return found, missing, nil
}
