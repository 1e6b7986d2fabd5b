package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shardpipe/shardpipe/pgeffect"
	"github.com/shardpipe/shardpipe/sink"
)

// pgTables is the parent's side of the SQL modes' rounds: it makes each
// round's tables fresh, counts their rows when the worker is done (the
// round is refused unless they equal the records it applied: check) and
// drops them, so that a run holds at most a round's tables at a time.
type pgTables struct {
	pool *pgxpool.Pool
	desc string
}

// openPGTables connects to cfg's database (two connections at most) and
// checks that it answers within a connect timeout.
func openPGTables(ctx context.Context, cfg Config) (*pgTables, error) {
	db, err := sqlDB(cfg.SQLURL, cfg.SQLPasswordFile)
	if err != nil {
		return nil, err
	}
	pc := db.Config.Copy()
	pc.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("bench: PostgreSQL at %s: %w", db.Desc, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("bench: PostgreSQL at %s (password: %s): %w", db.Desc, passwordFrom(db.PasswordFrom), err)
	}
	return &pgTables{pool: pool, desc: db.Desc}, nil
}

func passwordFrom(s string) string {
	if s == "" {
		return "none given"
	}
	return s
}

func (p *pgTables) close() { p.pool.Close() }

// create makes spec's tables: the bench table (order_id its primary key,
// as an orders table has one) and, for m and n, the inbox as pgeffect
// makes it. A table left by a crashed run of the same name is dropped
// first.
func (p *pgTables) create(ctx context.Context, spec Spec) error {
	if err := p.drop(ctx, spec); err != nil {
		return err
	}
	t := pgx.Identifier{spec.Table}.Sanitize()
	if _, err := p.pool.Exec(ctx, "CREATE TABLE "+t+" (order_id text PRIMARY KEY, customer text NOT NULL, amount_cents bigint NOT NULL)"); err != nil {
		return fmt.Errorf("bench %s: create table %s: %w", spec.Mode, t, err)
	}
	if spec.Inbox == "" {
		return nil
	}
	none := func(context.Context, pgx.Tx, string, *sink.Record) error { return nil }
	eff, err := pgeffect.New(p.pool, spec.Inbox, none)
	if err == nil {
		err = eff.EnsureInbox(ctx)
	}
	if err != nil {
		return fmt.Errorf("bench %s: %w", spec.Mode, err)
	}
	return nil
}

// finish completes res, the worker's result of spec's round (werr its
// error), with the rows of the round's tables, then drops them whatever
// happened.
func (p *pgTables) finish(ctx context.Context, spec Spec, res Result, werr error) (Result, error) {
	if werr == nil {
		res.Rows, werr = p.count(ctx, spec.Table)
	}
	if werr == nil && spec.Inbox != "" {
		res.InboxRows, werr = p.count(ctx, spec.Inbox)
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return res, errors.Join(werr, p.drop(dctx, spec))
}

func (p *pgTables) count(ctx context.Context, table string) (int64, error) {
	var n int64
	t := pgx.Identifier{table}.Sanitize()
	if err := p.pool.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
		return 0, fmt.Errorf("bench: count the rows of %s: %w", t, err)
	}
	return n, nil
}

func (p *pgTables) drop(ctx context.Context, spec Spec) error {
	for _, table := range []string{spec.Table, spec.Inbox} {
		if table == "" {
			continue
		}
		if _, err := p.pool.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{table}.Sanitize()); err != nil {
			return fmt.Errorf("bench: drop table %s of %s at %s: %w", table, spec.Mode, p.desc, err)
		}
	}
	return nil
}
