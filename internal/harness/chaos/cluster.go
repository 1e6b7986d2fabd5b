package chaos

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/internal/harness/clusters"
)

// ClusterServices are the run's servers for `make chaos CLUSTER=1`: a Redis
// Cluster of three masters with one replica each (appendonly yes,
// appendfsync always) and a Kafka of three brokers (replication factor 3,
// min.insync.replicas=2), started by scripts/services.sh under Dir on free
// ports. Redis faults become master failovers and broker faults SIGKILLs of
// the broker that leads the most partitions (or the group's coordinator);
// `run` is given every node, --redis-replicas 1, and with --effect totals a
// ledger prefix and totals hash under one {hash tag}.
type ClusterServices struct {
	Root string
	Dir  string

	redis *clusters.Redis
	kafka *clusters.Kafka
}

// start starts both clusters at once and waits until they are whole.
func (c *ClusterServices) start(ctx context.Context, logf func(string, ...any)) error {
	var wg sync.WaitGroup
	var rerr, kerr error
	began := time.Now()
	wg.Go(func() {
		c.redis, rerr = clusters.StartRedis(ctx, c.Root, filepath.Join(c.Dir, "redis"), "SHARDPIPE_REDIS_APPENDFSYNC=always")
	})
	wg.Go(func() { c.kafka, kerr = clusters.StartKafka(ctx, c.Root, filepath.Join(c.Dir, "kafka")) })
	wg.Wait()
	if err := errors.Join(rerr, kerr); err != nil {
		_ = c.stop(context.WithoutCancel(ctx))
		return err
	}
	logf("clusters up in %v: redis cluster %s; kafka brokers %s", time.Since(began).Round(time.Second),
		strings.Join(c.redis.Addrs, ","), strings.Join(c.kafka.Brokers, ","))
	return nil
}

// stop stops whatever of both clusters started.
func (c *ClusterServices) stop(ctx context.Context) error {
	var errs []error
	if c.redis != nil {
		errs = append(errs, c.redis.Stop(ctx))
	}
	if c.kafka != nil {
		errs = append(errs, c.kafka.Stop(ctx))
	}
	return errors.Join(errs...)
}

// brokers are the seed brokers of the run's Kafka.
func (c Config) brokers() []string {
	if c.Cluster != nil {
		return c.Cluster.kafka.Brokers
	}
	return []string{c.Services.Brokers()}
}

// redis is the run's --redis: one address, or every node of the cluster.
func (c Config) redis() string {
	if c.Cluster != nil {
		return strings.Join(c.Cluster.redis.Addrs, ",")
	}
	return c.Services.Redis()
}

// replication is the topics' replication factor.
func (c Config) replication() int16 {
	if c.Cluster != nil {
		return 3
	}
	return 1
}

// startServers starts the run's servers and returns how to stop them.
func (c Config) startServers(ctx context.Context, logf func(string, ...any)) (func(), error) {
	if c.Cluster != nil {
		if err := c.Cluster.start(ctx, logf); err != nil {
			return nil, err
		}
		return func() {
			if err := c.Cluster.stop(context.Background()); err != nil {
				logf("stopping the clusters: %v", err)
			}
		}, nil
	}
	if err := c.Services.StartPicking(ctx, logf); err != nil {
		return nil, err
	}
	return func() {
		if err := c.Services.Stop(context.Background()); err != nil {
			logf("stopping the servers: %v", err)
		}
	}, nil
}

// checkRedisNodes insists on appendonly yes and appendfsync always on every
// node of spec (one address or a comma-separated list).
func checkRedisNodes(ctx context.Context, spec string) error {
	for _, addr := range strings.Split(spec, ",") {
		if err := checkRedis(ctx, addr); err != nil {
			return err
		}
	}
	return nil
}

// nodeClient is a client of one cluster node; the caller closes it.
func nodeClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: 3 * time.Second})
}

func (c Config) validateServers() error {
	if c.Cluster != nil && (c.Cluster.Root == "" || c.Cluster.Dir == "") {
		return fmt.Errorf("chaos: cluster services need Root and Dir")
	}
	return nil
}
