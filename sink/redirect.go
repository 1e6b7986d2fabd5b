package sink

import "github.com/redis/go-redis/v9"

// transient reports whether err is worth retrying on client c: what
// retryable says, and on a cluster client also a MOVED or ASK reply. A
// cluster client follows those itself, up to its MaxRedirects; one that
// still comes back means the cluster changed faster than the client's view
// of it (a failover under way, a slot migration), and the client reloads
// its slot map meanwhile. On a single-node client MOVED means the server is
// a cluster node addressed as one: a misconfiguration, not retried.
func transient(c redis.UniversalClient, err error) bool {
	if retryable(err) {
		return true
	}
	_, cluster := c.(*redis.ClusterClient)
	return cluster && redirected(err)
}

// redirected reports whether err is a MOVED or ASK reply.
func redirected(err error) bool {
	return redis.HasErrorPrefix(err, "MOVED") || redis.HasErrorPrefix(err, "ASK")
}
