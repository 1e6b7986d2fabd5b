package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pgeffect"
	"github.com/shardpipe/shardpipe/pipeline"
)

// effectConfig is what run and replay share of the effect beyond the
// ledger's flags: --effect http's and --effect sql's settings, and the
// concurrent effects (--max-in-flight and the rest).
type effectConfig struct {
	http     settings.HTTP // with --effect http
	sql      settings.SQL  // with --effect sql
	inflight inflightConfig
}

// effectGroups are the flags of the guard-mode effects and of concurrent
// effects, loaded after lc's ledger group, which says which effect is on.
func (ec *effectConfig) effectGroups(lc *ledgerConfig) []cliflags.Group {
	return []cliflags.Group{settings.HTTPGroup(&ec.http, &lc.httpEffect), settings.SQLGroup(&ec.sql, &lc.sqlEffect),
		cliflags.Then(settings.InFlightGroup(&ec.inflight.s), func() { ec.inflight.s.ForEffect(lc.guardEffect != "") })}
}

// applier builds the sink topics' records land through: lc's ledger, or
// guard mode for --effect http and, around sqlEff (openEffect's), for
// --effect sql. It does no I/O.
func (ec *effectConfig) applier(lc ledgerConfig, sqlEff *pgeffect.Effect, topics []string, rdb redis.UniversalClient, log *slog.Logger) (pipeline.Applier, error) {
	switch {
	case lc.httpEffect:
		return newHTTPGuarded(lc, ec.http, topics, rdb, log)
	case lc.sqlEffect:
		return ec.sql.Guarded(lc.l, sqlEff, rdb, topics, log)
	}
	return newApplier(lc, topics, rdb, log)
}

// sqlEffect is --effect sql opened (openEffect): the pool, the effect,
// and close, which stops the inbox pruner, then closes the pool. Without
// --effect sql all are nil but close, which does nothing.
type sqlEffect struct {
	pool  *pgxpool.Pool
	eff   *pgeffect.Effect
	close func()
}

// openEffect is the start-up of --effect sql for run and replay (openSQL:
// PostgreSQL waited for within timeout, the inbox checked or created, the
// statement prepared; exit 2 or 3 naming the problem), and starts the
// inbox pruner when --sql-inbox-keep is set (startPruner). The caller
// defers close.
func (ec *effectConfig) openEffect(ctx context.Context, lc ledgerConfig, timeout time.Duration, log *slog.Logger) (sqlEffect, error) {
	if !lc.sqlEffect {
		return sqlEffect{close: func() {}}, nil
	}
	pool, eff, err := openSQL(ctx, ec.sql, lc.l.Spec.PerTopic, timeout, log)
	if err != nil {
		return sqlEffect{}, err
	}
	stop := startPruner(ec.sql, eff, log)
	return sqlEffect{pool: pool, eff: eff, close: func() { stop(); pool.Close() }}, nil
}
