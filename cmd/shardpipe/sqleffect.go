package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pgeffect"
)

// openSQL is --effect sql's start-up (settings.SQL.Open within
// --connect-timeout, a PostgreSQL that does not answer waited for and the
// wait logged once): the pool and the effect, or an exit error (2: the
// statement or inbox table refused; 3: PostgreSQL unreachable or the
// credentials refused). Without --effect sql it returns nils.
func openSQL(ctx context.Context, rc *runConfig, log *slog.Logger) (*pgxpool.Pool, *pgeffect.Effect, error) {
	if !rc.sqlEffect {
		return nil, nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, rc.connectTimeout)
	defer cancel()
	pool, eff, err := rc.sql.Open(ctx, rc.l.Spec.PerTopic, func(err error) {
		log.Warn(fmt.Sprintf("waiting for PostgreSQL at %s up to %v: %v", rc.sql.Desc, rc.connectTimeout, err))
	})
	var se *settings.SQLStartError
	switch {
	case errors.As(err, &se) && se.Usage:
		return nil, nil, usageErr(se.Error())
	case err != nil:
		return nil, nil, unavailableErr(err.Error())
	}
	log.Info("sql effect ready", "database", rc.sql.Desc, "inbox", rc.sql.Inbox, "named_args", rc.sql.Statement.Names())
	return pool, eff, nil
}

// startPruner prunes the inbox of eff in the background while run runs,
// when --sql-inbox-keep is set; the returned func stops it and waits.
func startPruner(rc *runConfig, eff *pgeffect.Effect, log *slog.Logger) (stop func()) {
	if rc.sql.Keep <= 0 || eff == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	log.Info("sql inbox pruning", "inbox", rc.sql.Inbox, "keep", rc.sql.Keep, "max_rows_per_second", 1000)
	go func() {
		defer close(done)
		_ = pgeffect.Pruner{Effect: eff, Keep: rc.sql.Keep, Every: time.Second, Batch: 1000, Logger: log}.Run(ctx)
	}()
	return func() { cancel(); <-done }
}
