package settings

import (
	"crypto/x509"
	"log/slog"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/httpeffect"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/secure"
)

const (
	fHTTPURL     = "http-url"
	fHTTPTimeout = "http-timeout"
	fHTTPCA      = "http-ca"
)

// GuardLease is the lease of a guard-mode claim (sink's default): an
// effect must finish within it, so --http-timeout stays below it.
const GuardLease = 30 * time.Second

// HTTP is --effect http's settings.
type HTTP struct {
	// URL is where each record's value is POSTed.
	URL *url.URL
	// Timeout bounds one call; it is below GuardLease.
	Timeout time.Duration
	// RootCAs are the CAs trusted for an https URL (--http-ca); nil: the
	// system's roots.
	RootCAs *x509.CertPool
}

// HTTPGroup is the flags of --effect http, loaded into h and checked only
// when on is true once they load (the ledger's group sets it).
func HTTPGroup(h *HTTP, on *bool) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		if *on {
			h.load(c, bad)
		}
	},
		&cli.StringFlag{Name: fHTTPURL,
			Usage: "http: POST each record's value here (http:// or https://), with Idempotency-Key: the business key; 2xx is success"},
		&cli.DurationFlag{Name: fHTTPTimeout, Value: 10 * time.Second,
			Usage: "http: how long one call may take (below the guard lease, 30s); a timeout is an error and the batch is retried"},
		&cli.StringFlag{Name: fHTTPCA,
			Usage: "http: PEM file of the CA certificates to trust for an https:// --http-url instead of the system's (empty: the system's)"})
}

func (h *HTTP) load(c *cli.Command, bad *cliflags.Problems) {
	raw := c.String(fHTTPURL)
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		bad.Addf("%s: empty; --effect http needs the URL to POST each record to", ref(fHTTPURL))
	case err != nil:
		bad.Addf("%s: not a valid URL", ref(fHTTPURL))
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		bad.Addf("%s %q: want an absolute http:// or https:// URL with a host", ref(fHTTPURL), secure.RedactURL(raw))
	default:
		h.URL = u
	}
	if path := c.String(fHTTPCA); path != "" {
		if h.RootCAs, err = httpeffect.LoadRootCAs(path); err != nil {
			bad.Addf("%s %q: %v", ref(fHTTPCA), path, err)
		}
	}
	h.Timeout = DurationIn(c, bad, fHTTPTimeout, flagcheck.In(time.Millisecond, GuardLease-time.Second,
		"below the guard lease "+GuardLease.String()+": the call's context ends with the lease"))
}

// Guarded is --effect http: guard mode (a sink.Guard on l's Redis rdb, key
// space, TTL and key source, with GuardLease) around an HTTP call per
// record (httpeffect.Effect); in a per-topic key space, one Guard per topic.
func (h HTTP) Guarded(l Ledger, rdb redis.UniversalClient, topics []string, log *slog.Logger) (pipeline.Applier, error) {
	opts := []httpeffect.Opt{httpeffect.Timeout(h.Timeout)}
	if h.RootCAs != nil {
		opts = append(opts, httpeffect.RootCAs(h.RootCAs))
	}
	eff, err := httpeffect.New(h.URL.String(), opts...)
	if err != nil {
		return nil, err
	}
	return l.PerTopic(topics, log, func(s Spec, topic string) (pipeline.Applier, error) {
		g, err := s.Guard(rdb, topic, GuardLease)
		if err != nil {
			return nil, err
		}
		return pipeline.Guarded(g, eff.Do), nil
	})
}
