package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// redisTarget is a parsed --redis: how to connect, and a name for messages
// without secrets. Exactly one of single and clusterOpts is set.
type redisTarget struct {
	single      *redis.Options         // one node: host:port or a redis:// URL
	clusterOpts *redis.ClusterOptions  // Redis Cluster: a node list, or --redis-cluster
	failover    *redis.FailoverOptions // Sentinel: a URL with master_name (then single is nil)
	cluster     bool
	desc        string
}

// parseRedis reads host:port, a redis:// or rediss:// URL, or a comma list
// of cluster nodes. cluster forces Redis Cluster for a single address or URL.
// A URL's query options (protocol, timeouts, pool size, retries, client
// name...) are go-redis's own; an unknown one is an error.
func parseRedis(spec string, cluster bool) (redisTarget, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return redisTarget{}, errors.New("empty; want host:port, a redis:// URL or a comma-separated node list")
	}
	if strings.Contains(spec, "://") {
		return parseRedisURL(spec, cluster)
	}
	addrs := splitList([]string{spec})
	if len(addrs) == 0 {
		return redisTarget{}, errors.New("no address in the list; want host:port, a redis:// URL or a comma-separated node list")
	}
	for _, a := range addrs {
		if msg := hostPortProblem(a); msg != "" {
			return redisTarget{}, fmt.Errorf("address %q: %s", a, msg)
		}
	}
	desc := strings.Join(addrs, ",")
	if cluster || len(addrs) > 1 {
		return redisTarget{clusterOpts: &redis.ClusterOptions{Addrs: addrs}, cluster: true, desc: desc}, nil
	}
	return redisTarget{single: &redis.Options{Addr: addrs[0]}, desc: desc}, nil
}

func parseRedisURL(spec string, cluster bool) (redisTarget, error) {
	desc := redactURL(spec)
	if cluster {
		o, err := redis.ParseClusterURL(spec)
		if err != nil {
			return redisTarget{}, fmt.Errorf("cluster URL: %w", err)
		}
		return redisTarget{clusterOpts: o, cluster: true, desc: desc}, nil
	}
	if u, err := url.Parse(spec); err == nil && u.Query().Has("master_name") {
		o, err := redis.ParseFailoverURL(spec)
		if err != nil {
			return redisTarget{}, fmt.Errorf("sentinel URL: %w", err)
		}
		return redisTarget{failover: o, desc: desc}, nil
	}
	o, err := redis.ParseURL(spec)
	if err != nil {
		return redisTarget{}, fmt.Errorf("URL: %w", err)
	}
	return redisTarget{single: o, desc: desc}, nil
}

// redactURL hides a password in a redis URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// client returns a new client for t: a cluster client in cluster mode, a
// single-node client otherwise.
// Context deadlines bound every call, also a read from a server that
// accepted the connection and does not answer.
func (t redisTarget) client() redis.UniversalClient {
	if t.clusterOpts != nil {
		o := *t.clusterOpts
		o.ContextTimeoutEnabled = true
		return redis.NewClusterClient(&o)
	}
	if t.failover != nil {
		o := *t.failover
		o.ContextTimeoutEnabled = true
		return redis.NewFailoverClient(&o)
	}
	o := *t.single
	o.ContextTimeoutEnabled = true
	return redis.NewClient(&o)
}
