package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/bench"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
)

// benchConnectTimeout bounds bench's start-up check of its servers.
const benchConnectTimeout = 10 * time.Second

// benchReachable checks, before bench creates a topic or starts a worker,
// that its brokers and Redis answer (and Redis can run the ledger) and,
// with --sql-url, that PostgreSQL takes its credentials: a server it
// cannot reach is exit 3 naming it, as for every command; a wait for
// Redis is logged to log.
func benchReachable(ctx context.Context, k kafkaConn, cfg bench.Config, log *slog.Logger) error {
	target, err := flagcheck.ParseRedis(cfg.Redis, false)
	if err != nil {
		return usageErr(err.Error()) // validated before; kept for safety
	}
	rdb := target.Client()
	defer rdb.Close()
	if err := preflight(ctx, k, nil, rdb, target.Desc, benchConnectTimeout, log); err != nil {
		return err
	}
	return benchPostgres(ctx, cfg)
}

// benchPostgres pings --sql-url's database within benchConnectTimeout
// (no wait for one that is down: the bench would measure nothing of it).
func benchPostgres(ctx context.Context, cfg bench.Config) error {
	if cfg.SQLURL == "" {
		return nil
	}
	var bad cliflags.Problems
	db := settings.LoadSQLDB(cfg.SQLURL, cfg.SQLPasswordFile, &bad)
	if len(bad) > 0 || db.Config == nil {
		return usageErr(bad...) // validated before; kept for safety
	}
	ctx, cancel := context.WithTimeout(ctx, benchConnectTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, db.Config)
	if err == nil {
		defer pool.Close()
		err = pool.Ping(ctx)
	}
	if err != nil {
		from := db.PasswordFrom
		if from == "" {
			from = "none given"
		}
		return unavailableErr(fmt.Sprintf("PostgreSQL at %s (password: %s): %v", db.Desc, from, err))
	}
	return nil
}
