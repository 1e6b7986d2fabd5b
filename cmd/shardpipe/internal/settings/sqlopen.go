package settings

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shardpipe/shardpipe/pgeffect"
)

// SQLStartError is a failure of --effect sql's start-up checks. Usage says
// the settings are at fault (a statement or inbox table PostgreSQL refuses:
// exit 2), else the server could not be used (unreachable, credentials
// refused: exit 3).
type SQLStartError struct {
	Usage bool
	Err   error
}

func (e *SQLStartError) Error() string { return e.Err.Error() }
func (e *SQLStartError) Unwrap() error { return e.Err }

// Open connects to the database (one connection, checking the
// credentials), creates the inbox table when missing and prepares the
// statement, all bounded by ctx; it returns the pool and the effect, or a
// *SQLStartError. A PostgreSQL that does not answer, or answers that it is
// starting up or shutting down (SQLSTATE class 57P), is asked again with a
// backoff (50 ms doubling to 1 s) until ctx ends; onWait, when not nil, is
// called once, with the error, when that waiting starts. Refused
// credentials or a missing database end Open at once. perTopic keeps each
// topic's keys apart in the inbox. The caller closes the pool.
func (s SQL) Open(ctx context.Context, perTopic bool, onWait func(err error)) (*pgxpool.Pool, *pgeffect.Effect, error) {
	pool, err := pgxpool.NewWithConfig(ctx, s.Config)
	if err != nil {
		return nil, nil, &SQLStartError{Usage: true, Err: fmt.Errorf("%s %q: %w", ref(fSQLURL), s.Desc, err)}
	}
	var opts []pgeffect.Opt
	if perTopic {
		opts = append(opts, pgeffect.PerTopic())
	}
	eff, err := pgeffect.New(pool, s.Inbox, s.Statement.Work, opts...)
	if err != nil {
		pool.Close()
		return nil, nil, &SQLStartError{Usage: true, Err: fmt.Errorf("%s %q: %w", ref(fSQLInbox), s.Inbox, err)}
	}
	if err := s.check(ctx, pool, eff, onWait); err != nil {
		pool.Close()
		return nil, nil, err
	}
	return pool, eff, nil
}

func (s SQL) check(ctx context.Context, pool *pgxpool.Pool, eff *pgeffect.Effect, onWait func(error)) error {
	conn, err := acquire(ctx, pool, onWait)
	if err != nil {
		return s.connectError(err)
	}
	// The connection goes back before EnsureInbox takes one: a pool of one
	// (pool_max_conns=1) would otherwise wait for itself.
	err = s.Statement.Check(ctx, conn.Conn())
	conn.Release()
	if err != nil {
		return &SQLStartError{Usage: serverRefused(err), Err: fmt.Errorf("%s: PostgreSQL at %s refused the statement: %w", ref(fSQLExec), s.Desc, err)}
	}
	if err := eff.EnsureInbox(ctx); err != nil {
		return &SQLStartError{Usage: serverRefused(err), Err: fmt.Errorf("%s %q: %w", ref(fSQLInbox), s.Inbox, err)}
	}
	return nil
}

// acquire takes a connection from pool, asking again while PostgreSQL does
// not answer (see Open) until ctx ends; it returns the last error the
// server or the network gave, not ctx's, once it has waited.
func acquire(ctx context.Context, pool *pgxpool.Pool, onWait func(error)) (*pgxpool.Conn, error) {
	var last error
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		conn, err := pool.Acquire(ctx)
		switch {
		case err == nil:
			return conn, nil
		case !transient(err):
			return nil, err
		case ctx.Err() != nil:
			if last != nil {
				return nil, last
			}
			return nil, err
		}
		if last == nil && onWait != nil {
			onWait(err)
		}
		last = err
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, last
		case <-t.C:
		}
	}
}

// transient reports whether a failed connection is worth trying again: the
// server did not answer (no SQLSTATE), or answered that it is starting,
// shutting down or recovering (class 57P) or out of connections (53300).
func transient(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return true
	}
	return strings.HasPrefix(pe.Code, "57P") || pe.Code == "53300"
}

// connectError names why the first connection failed: the credentials
// refused (SQLSTATE class 28), the database missing (3D000), or the server
// unreachable.
func (s SQL) connectError(err error) error {
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "28"):
		from := s.PasswordFrom
		if from == "" {
			from = "no password given"
		}
		return &SQLStartError{Err: fmt.Errorf("PostgreSQL at %s refused the credentials of user %q (password: %s): %w",
			s.Desc, s.Config.ConnConfig.User, from, err)}
	case errors.As(err, &pe) && pe.Code == "3D000":
		return &SQLStartError{Usage: true, Err: fmt.Errorf("%s %q: %w", ref(fSQLURL), s.Desc, err)}
	}
	return &SQLStartError{Err: fmt.Errorf("PostgreSQL at %s unreachable: %w", s.Desc, err)}
}

// serverRefused reports whether PostgreSQL answered err (a *pgconn.PgError:
// the statement or table is at fault), not the connection.
func serverRefused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}
