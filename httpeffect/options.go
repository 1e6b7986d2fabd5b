package httpeffect

import (
	"crypto/x509"
	"time"
)

// Opt configures New, as kgo.Opt configures a franz-go client.
type Opt interface{ apply(*Effect) }

type opt func(*Effect)

func (o opt) apply(e *Effect) { o(e) }

// Timeout bounds one call (default DefaultTimeout). Keep it below the
// guard's lease (sink.WithLease, 30s by default): the call's context ends
// with the lease.
func Timeout(d time.Duration) Opt { return opt(func(e *Effect) { e.timeout = d }) }

// RootCAs makes the Effect trust the certificates of pool for https://
// URLs instead of the system's roots (a private CA). It costs nothing per
// call: TLS connections are kept alive and reused.
func RootCAs(pool *x509.CertPool) Opt {
	return opt(func(e *Effect) { e.rootCAs = pool })
}
