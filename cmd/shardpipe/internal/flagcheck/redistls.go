package flagcheck

import "crypto/tls"

// TLSConfig is the TLS configuration t's client will use (a rediss:// URL's,
// with the TLS settings applied by Secure), or nil for none.
func (t RedisTarget) TLSConfig() *tls.Config {
	switch {
	case t.ClusterOpts != nil:
		return t.ClusterOpts.TLSConfig
	case t.Failover != nil:
		return t.Failover.TLSConfig
	case t.Single != nil:
		return t.Single.TLSConfig
	}
	return nil
}
