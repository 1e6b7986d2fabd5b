package main

import (
	"crypto/x509"
	"log/slog"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/httpeffect"
	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/pipeline"
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

// httpGroup is the flags of --effect http, checked only when on is.
func httpGroup(hc *httpConfig, on *bool) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		if !*on {
			return
		}
		raw := c.String(fHTTPURL)
		u, err := url.Parse(raw)
		switch {
		case raw == "":
			bad.Addf("%s: empty; --effect http needs the URL to POST each record to", flagRef(fHTTPURL))
		case err != nil:
			bad.Addf("%s: not a valid URL", flagRef(fHTTPURL))
		case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
			bad.Addf("%s %q: want an absolute http:// or https:// URL with a host", flagRef(fHTTPURL), u.Redacted())
		default:
			hc.url = u
		}
		if path := c.String(fHTTPCA); path != "" {
			var err error
			if hc.rootCAs, err = httpeffect.LoadRootCAs(path); err != nil {
				bad.Addf("%s %q: %v", flagRef(fHTTPCA), path, err)
			}
		}
		if hc.timeout = c.Duration(fHTTPTimeout); hc.timeout <= 0 || hc.timeout >= guardLease {
			bad.Addf("%s %v: want more than 0 and less than the guard lease %v (the call's context ends with the lease)",
				flagRef(fHTTPTimeout), hc.timeout, guardLease)
		}
	},
		&cli.StringFlag{Name: fHTTPURL,
			Usage: "http: POST each record's value here (http:// or https://), with Idempotency-Key: the business key; 2xx is success"},
		&cli.DurationFlag{Name: fHTTPTimeout, Value: 10 * time.Second,
			Usage: "http: how long one call may take (below the guard lease, 30s); a timeout is an error and the batch is retried"},
		&cli.StringFlag{Name: fHTTPCA,
			Usage: "http: PEM file of the CA certificates to trust for an https:// --http-url instead of the system's (empty: the system's)"})
}

// newHTTPGuarded is --effect http: guard mode (httpeffect.Effect) (a
// sink.Guard on the ledger's Redis, key space, TTL and key source) around
// an HTTP call per record; in a per-topic key space, one Guard per topic.
func newHTTPGuarded(lc ledgerConfig, hc httpConfig, topics []string, rdb redis.UniversalClient, log *slog.Logger) (pipeline.Applier, error) {
	hopts := []httpeffect.Opt{httpeffect.Timeout(hc.timeout)}
	if hc.rootCAs != nil {
		hopts = append(hopts, httpeffect.RootCAs(hc.rootCAs))
	}
	eff, err := httpeffect.New(hc.url.String(), hopts...)
	if err != nil {
		return nil, err
	}
	return lc.perTopic(topics, log, func(topic string) (pipeline.Applier, error) {
		g, err := lc.spec(log).Guard(rdb, topic, guardLease)
		if err != nil {
			return nil, err
		}
		return pipeline.Guarded(g, eff.Do), nil
	})
}
