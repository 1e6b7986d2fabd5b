package main

import (
	"crypto/x509"
	"net/url"
	"os"
	"time"

	"github.com/urfave/cli/v3"
)

// Flag names of --effect http (run only).
const (
	fHTTPURL     = "http-url"
	fHTTPTimeout = "http-timeout"
	fHTTPCA      = "http-ca"
)

// guardLease is the lease of a guard-mode claim (sink's default): an
// effect must finish within it, so --http-timeout stays below it.
const guardLease = 30 * time.Second

// httpConfig is --effect http's validated configuration.
type httpConfig struct {
	url     *url.URL
	timeout time.Duration
	rootCAs *x509.CertPool // --http-ca; nil: the system's roots
}

// httpFlags are the flags of --effect http.
func httpFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: fHTTPURL, Sources: fromEnv(fHTTPURL),
			Usage: "http: POST each record's value here (http:// or https://), with Idempotency-Key: the business key; 2xx is success"},
		&cli.DurationFlag{Name: fHTTPTimeout, Value: 10 * time.Second, Sources: fromEnv(fHTTPTimeout),
			Usage: "http: how long one call may take (below the guard lease, 30s); a timeout is an error and the batch is retried"},
		&cli.StringFlag{Name: fHTTPCA, Sources: fromEnv(fHTTPCA),
			Usage: "http: PEM file of the CA certificates to trust for an https:// --http-url instead of the system's (empty: the system's)"},
	}
}

// loadHTTPConfig reads the http flags, adding one line per problem to bad.
func loadHTTPConfig(c *cli.Command, bad *problems) httpConfig {
	var hc httpConfig
	raw := c.String(fHTTPURL)
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		bad.addf("%s: empty; --effect http needs the URL to POST each record to", flagRef(fHTTPURL))
	case err != nil:
		bad.addf("%s: not a valid URL", flagRef(fHTTPURL))
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		bad.addf("%s %q: want an absolute http:// or https:// URL with a host", flagRef(fHTTPURL), u.Redacted())
	default:
		hc.url = u
	}
	if path := c.String(fHTTPCA); path != "" {
		pem, err := os.ReadFile(path)
		pool := x509.NewCertPool()
		switch {
		case err != nil:
			bad.addf("%s %q: %v", flagRef(fHTTPCA), path, err)
		case !pool.AppendCertsFromPEM(pem):
			bad.addf("%s %q: no PEM certificate in it", flagRef(fHTTPCA), path)
		default:
			hc.rootCAs = pool
		}
	}
	hc.timeout = c.Duration(fHTTPTimeout)
	if hc.timeout <= 0 || hc.timeout >= guardLease {
		bad.addf("%s %v: want more than 0 and less than the guard lease %v (the call's context ends with the lease)",
			flagRef(fHTTPTimeout), hc.timeout, guardLease)
	}
	return hc
}
