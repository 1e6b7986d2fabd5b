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

// openSQL is --effect sql's start-up, for run and replay (s.Open within
// timeout, a PostgreSQL that does not answer waited for and the wait
// logged once): the pool and the effect, or an exit error (2: the
// statement or inbox table refused; 3: PostgreSQL unreachable or the
// credentials refused). perTopic keeps each topic's keys apart in the inbox.
func openSQL(ctx context.Context, s settings.SQL, perTopic bool, timeout time.Duration, log *slog.Logger) (*pgxpool.Pool, *pgeffect.Effect, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pool, eff, err := s.Open(ctx, perTopic, func(err error) {
		log.Warn(fmt.Sprintf("waiting for PostgreSQL at %s up to %v: %v", s.Desc, timeout, err))
	})
	var se *settings.SQLStartError
	switch {
	case errors.As(err, &se) && se.Usage:
		return nil, nil, usageErr(se.Error())
	case err != nil:
		return nil, nil, unavailableErr(err.Error())
	}
	log.Info("sql effect ready", "database", s.Desc, "inbox", s.Inbox, "named_args", s.Statement.Names())
	return pool, eff, nil
}

// startPruner prunes the inbox of eff in the background while run or
// replay runs, when --sql-inbox-keep is set; the returned func stops it and
// waits.
func startPruner(s settings.SQL, eff *pgeffect.Effect, log *slog.Logger) (stop func()) {
	if s.Keep <= 0 || eff == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	log.Info("sql inbox pruning", "inbox", s.Inbox, "keep", s.Keep, "max_rows_per_second", 1000)
	go func() {
		defer close(done)
		_ = pgeffect.Pruner{Effect: eff, Keep: s.Keep, Every: time.Second, Batch: 1000, Logger: log}.Run(ctx)
	}()
	return func() { cancel(); <-done }
}
