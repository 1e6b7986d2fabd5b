package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// redisTarget is a parsed --redis: how to connect, and a name for messages
// without secrets.
type redisTarget struct {
	opts    *redis.UniversalOptions
	cluster bool
	desc    string
}

// parseRedis reads host:port, a redis:// or rediss:// URL, or a comma list
// of cluster nodes. cluster forces Redis Cluster for a single address or URL.
func parseRedis(spec string, cluster bool) (redisTarget, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return redisTarget{}, errors.New("empty; want host:port, a redis:// URL or a comma-separated node list")
	}
	if strings.Contains(spec, "://") {
		return parseRedisURL(spec, cluster)
	}
	addrs := splitList([]string{spec})
	for _, a := range addrs {
		if msg := hostPortProblem(a); msg != "" {
			return redisTarget{}, fmt.Errorf("address %q: %s", a, msg)
		}
	}
	cluster = cluster || len(addrs) > 1
	return redisTarget{opts: &redis.UniversalOptions{Addrs: addrs, IsClusterMode: cluster},
		cluster: cluster, desc: strings.Join(addrs, ",")}, nil
}

func parseRedisURL(spec string, cluster bool) (redisTarget, error) {
	desc := redactURL(spec)
	if cluster {
		o, err := redis.ParseClusterURL(spec)
		if err != nil {
			return redisTarget{}, fmt.Errorf("cluster URL: %w", err)
		}
		return redisTarget{opts: &redis.UniversalOptions{Addrs: o.Addrs, Username: o.Username,
			Password: o.Password, TLSConfig: o.TLSConfig, IsClusterMode: true}, cluster: true, desc: desc}, nil
	}
	o, err := redis.ParseURL(spec)
	if err != nil {
		return redisTarget{}, fmt.Errorf("URL: %w", err)
	}
	return redisTarget{opts: &redis.UniversalOptions{Addrs: []string{o.Addr}, Username: o.Username,
		Password: o.Password, DB: o.DB, TLSConfig: o.TLSConfig}, desc: desc}, nil
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
	o := *t.opts
	o.ContextTimeoutEnabled = true
	return redis.NewUniversalClient(&o)
}
