package secure

import (
	"crypto/tls"

	"github.com/redis/go-redis/v9"
)

// Redis is how to reach a secured Redis: TLS and an ACL user. The zero
// value changes nothing.
type Redis struct {
	// TLS settings. A rediss:// URL turns TLS on by itself; these add a CA,
	// a client certificate or a server name to it.
	TLS TLS
	// User is the ACL user; empty keeps the URL's user, or "default".
	User string
	// Password is the user's password; empty keeps the URL's.
	Password Secret
}

// ApplyOptions sets r on a single-node client's options.
func (r Redis) ApplyOptions(o *redis.Options) error {
	return r.apply(&o.TLSConfig, &o.Username, &o.Password)
}

// ApplyCluster sets r on a Redis Cluster client's options; every node gets
// the same TLS settings and user.
func (r Redis) ApplyCluster(o *redis.ClusterOptions) error {
	return r.apply(&o.TLSConfig, &o.Username, &o.Password)
}

// ApplyUniversal sets r on a UniversalOptions (any of the three clients).
func (r Redis) ApplyUniversal(o *redis.UniversalOptions) error {
	return r.apply(&o.TLSConfig, &o.Username, &o.Password)
}

// ApplyFailover sets r on a Sentinel client's options: the master and
// replicas get the user, TLS applies to the sentinels too (go-redis uses
// one TLS config for both); a sentinel's own password comes from the URL.
func (r Redis) ApplyFailover(o *redis.FailoverOptions) error {
	return r.apply(&o.TLSConfig, &o.Username, &o.Password)
}

func (r Redis) apply(cfg **tls.Config, user, pass *string) error {
	if r.TLS.On() {
		c, err := r.TLS.Config()
		if err != nil {
			return err
		}
		if *cfg != nil && c.ServerName == "" {
			c.ServerName = (*cfg).ServerName
		}
		*cfg = c
	}
	if r.User != "" {
		*user = r.User
	}
	if !r.Password.IsZero() {
		*pass = r.Password.Value()
	}
	return nil
}
