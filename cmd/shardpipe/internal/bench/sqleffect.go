package bench

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pgeffect"
	"github.com/shardpipe/shardpipe/pipeline"
)

// sqlOpenTimeout bounds the SQL mode's start-up, as run's
// --connect-timeout does (its default).
const sqlOpenTimeout = 10 * time.Second

// sqlApplier is the SQL mode's sink, built as `run --effect sql` builds
// it: settings.SQL.Open (the pool from the URL with run's defaults, the
// inbox checked, the statement prepared) and settings.SQL.Guarded (guard
// mode on rdb with the round's prefix and TTL around the effect), with
// sqlStatement into spec.Table and spec.Inbox as the inbox. The returned
// func closes the pool.
func sqlApplier(ctx context.Context, rdb redis.UniversalClient, spec Spec, log *slog.Logger) (pipeline.Applier, func(), error) {
	db, err := sqlDB(spec.SQLURL, spec.SQLPasswordFile)
	if err != nil {
		return nil, nil, err
	}
	st, err := pgeffect.NewStatement(sqlStatement(spec.Table))
	if err != nil {
		return nil, nil, err
	}
	s := settings.SQL{SQLDB: db, Statement: st, Inbox: spec.Inbox}
	octx, cancel := context.WithTimeout(ctx, sqlOpenTimeout)
	defer cancel()
	pool, eff, err := s.Open(octx, false, nil)
	if err != nil {
		return nil, nil, err
	}
	l := settings.Ledger{Spec: settings.Spec{Prefix: spec.Prefix, TTL: spec.TTL}, SQL: true}
	a, err := s.Guarded(l, eff, rdb, []string{spec.Topic}, log)
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("sql effect: %w", err)
	}
	return a, pool.Close, nil
}

// seeThrough is timed as the pipeline sees through it (Unwrap), so that
// it finds the guard's Keyer and Finisher as it does in run, where no
// timed wraps them.
type seeThrough struct{ *timed }

// Unwrap returns the Applier timed wraps.
func (s seeThrough) Unwrap() pipeline.Applier { return s.inner }
