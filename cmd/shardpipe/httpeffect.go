package main

import (
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pipeline"
)

// httpConfig is --effect http's settings; httpGroup its flags, checked
// only when on is.
type httpConfig = settings.HTTP

func httpGroup(hc *httpConfig, on *bool) cliflags.Group { return settings.HTTPGroup(hc, on) }

// newApplier returns the ledger run applies topics' records through.
func newApplier(lc ledgerConfig, topics []string, rdb redis.UniversalClient, log *slog.Logger) (pipeline.Applier, error) {
	return lc.l.Applier(rdb, topics, log)
}

// newHTTPGuarded is --effect http: guard mode around an HTTP call per
// record (settings.HTTP.Guarded).
func newHTTPGuarded(lc ledgerConfig, hc httpConfig, topics []string, rdb redis.UniversalClient, log *slog.Logger) (pipeline.Applier, error) {
	return hc.Guarded(lc.l, rdb, topics, log)
}
