package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/bench"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
)

// benchConnectTimeout bounds bench's start-up check of its servers.
const benchConnectTimeout = 10 * time.Second

// benchReachable checks, before bench creates a topic or starts a worker,
// that its brokers and Redis answer (and Redis can run the ledger): a
// server it cannot reach is exit 3 naming it, as for every command; a
// wait for Redis is logged to log.
func benchReachable(ctx context.Context, k kafkaConn, cfg bench.Config, log *slog.Logger) error {
	target, err := flagcheck.ParseRedis(cfg.Redis, false)
	if err != nil {
		return usageErr(err.Error()) // validated before; kept for safety
	}
	rdb := target.Client()
	defer rdb.Close()
	return preflight(ctx, k, nil, rdb, target.Desc, benchConnectTimeout, log)
}
