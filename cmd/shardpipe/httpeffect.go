package main

import (
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pipeline"
)

// newApplier returns the ledger run applies topics' records through.
func newApplier(lc ledgerConfig, topics []string, rdb redis.UniversalClient, log *slog.Logger) (pipeline.Applier, error) {
	return lc.l.Applier(rdb, topics, log)
}

// newHTTPGuarded is --effect http: guard mode around an HTTP call per
// record (settings.HTTP.Guarded).
func newHTTPGuarded(lc ledgerConfig, hc settings.HTTP, topics []string, rdb redis.UniversalClient, log *slog.Logger) (pipeline.Applier, error) {
	return hc.Guarded(lc.l, rdb, topics, log)
}
