package flagcheck

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/secure"
)

// RedisTarget is a parsed Redis setting: how to connect, and a name for
// messages without secrets. Exactly one of Single, ClusterOpts and
// Failover is set.
type RedisTarget struct {
	// Single is a one-node target: host:port or a redis:// URL.
	Single *redis.Options
	// ClusterOpts is a Redis Cluster target: a node list, or a single
	// address or URL forced to cluster mode.
	ClusterOpts *redis.ClusterOptions
	// Failover is a Redis Sentinel target: a URL with master_name.
	Failover *redis.FailoverOptions
	// Cluster is true when ClusterOpts is set.
	Cluster bool
	// Desc names the target in messages: secure.RedactURL of the setting
	// (no password, no query value).
	Desc string
}

// ParseRedis reads host:port, a redis:// or rediss:// URL, or a comma list
// of cluster nodes. cluster forces Redis Cluster for a single address or URL.
// A URL's query options (protocol, timeouts, pool size, retries, client
// name...) are go-redis's own; an unknown one is an error. No error shows
// a password or a query value: a URL that does not parse is named by the
// part that breaks it, an option by its name (several problems are
// joined, errors.Join, one each); Desc is secure.RedactURL's.
func ParseRedis(spec string, cluster bool) (RedisTarget, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return RedisTarget{}, errors.New("empty; want host:port, a redis:// URL or a comma-separated node list")
	}
	if strings.Contains(spec, "://") {
		return parseRedisURL(spec, cluster)
	}
	addrs := SplitList([]string{spec})
	if len(addrs) == 0 {
		return RedisTarget{}, errors.New("no address in the list; want host:port, a redis:// URL or a comma-separated node list")
	}
	for _, a := range addrs {
		if msg := HostPort(a); msg != "" {
			return RedisTarget{}, fmt.Errorf("address %q: %s", a, msg)
		}
	}
	desc := strings.Join(addrs, ",")
	if cluster || len(addrs) > 1 {
		return RedisTarget{ClusterOpts: &redis.ClusterOptions{Addrs: addrs}, Cluster: true, Desc: desc}, nil
	}
	return RedisTarget{Single: &redis.Options{Addr: addrs[0]}, Desc: desc}, nil
}

func parseRedisURL(spec string, cluster bool) (RedisTarget, error) {
	if parts := strings.Split(spec, ","); len(parts) > 1 && strings.Contains(strings.Join(parts[1:], ","), "://") {
		return RedisTarget{}, errors.New("a list of Redis URLs: give one URL (a cluster's or Sentinel's further nodes as &addr=host:port), or a list of host:port")
	}
	if err := urlSyntax(spec); err != nil {
		return RedisTarget{}, err
	}
	u, _ := url.Parse(spec) // urlSyntax parsed it
	c := single
	switch {
	case cluster:
		c = clusterClient
	case u.Query().Has("master_name"):
		c = sentinel
	}
	if errs := checkURL(u, c); len(errs) > 0 {
		return RedisTarget{}, errors.Join(errs...)
	}
	desc := secure.RedactURL(spec)
	switch c {
	case clusterClient:
		o, err := redis.ParseClusterURL(spec)
		if err != nil {
			return RedisTarget{}, refused(err)
		}
		return RedisTarget{ClusterOpts: o, Cluster: true, Desc: desc}, nil
	case sentinel:
		o, err := redis.ParseFailoverURL(spec)
		if err != nil {
			return RedisTarget{}, refused(err)
		}
		return RedisTarget{Failover: o, Desc: desc}, nil
	}
	o, err := redis.ParseURL(spec)
	if err != nil {
		return RedisTarget{}, refused(err)
	}
	return RedisTarget{Single: o, Desc: desc}, nil
}

// refused words go-redis's refusal of a URL checkURL passed, without its
// text, which may quote a value: only the names of unexpected options.
func refused(err error) error {
	if _, names, ok := strings.Cut(err.Error(), "unexpected option: "); ok {
		var esc []string
		for n := range strings.SplitSeq(names, ", ") {
			esc = append(esc, url.QueryEscape(n))
		}
		return fmt.Errorf("the Redis URL: unexpected option: %s", strings.Join(esc, ", "))
	}
	return errors.New("the Redis URL is not accepted by the Redis client (go-redis)")
}

// Client returns a new client for t: a cluster client in cluster mode, a
// Sentinel client for a Sentinel target, a single-node client otherwise. Context deadlines bound every call, also a
// read from a server that accepted the connection and does not answer.
func (t RedisTarget) Client() redis.UniversalClient { return t.client(0) }

// SmallClient is Client with a pool of its own of at most n connections
// (per node on a cluster), for a side task such as the readiness probe:
// it never takes a connection of, nor waits on, the pool Client's users
// share. It costs up to n connections per node.
func (t RedisTarget) SmallClient(n int) redis.UniversalClient { return t.client(n) }

// client is Client with pools of n connections (0: the target's own size).
func (t RedisTarget) client(n int) redis.UniversalClient {
	small := func(size, minIdle, maxIdle *int) {
		if n > 0 {
			*size, *minIdle, *maxIdle = n, 0, n
		}
	}
	if t.ClusterOpts != nil {
		o := *t.ClusterOpts
		o.ContextTimeoutEnabled = true
		small(&o.PoolSize, &o.MinIdleConns, &o.MaxIdleConns)
		return redis.NewClusterClient(&o)
	}
	if t.Failover != nil {
		o := *t.Failover
		o.ContextTimeoutEnabled = true
		small(&o.PoolSize, &o.MinIdleConns, &o.MaxIdleConns)
		return redis.NewFailoverClient(&o)
	}
	o := *t.Single
	o.ContextTimeoutEnabled = true
	small(&o.PoolSize, &o.MinIdleConns, &o.MaxIdleConns)
	return redis.NewClient(&o)
}

// Secure sets the TLS and ACL-user settings r on t's options.
func (t *RedisTarget) Secure(r secure.Redis) error {
	switch {
	case t.ClusterOpts != nil:
		return r.ApplyCluster(t.ClusterOpts)
	case t.Failover != nil:
		return r.ApplyFailover(t.Failover)
	case t.Single != nil:
		return r.ApplyOptions(t.Single)
	}
	return nil
}
