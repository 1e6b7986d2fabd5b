package settings

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
// *SQLStartError. perTopic keeps each topic's keys apart in the inbox. The
// caller closes the pool.
func (s SQL) Open(ctx context.Context, perTopic bool) (*pgxpool.Pool, *pgeffect.Effect, error) {
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
	if err := s.check(ctx, pool, eff); err != nil {
		pool.Close()
		return nil, nil, err
	}
	return pool, eff, nil
}

func (s SQL) check(ctx context.Context, pool *pgxpool.Pool, eff *pgeffect.Effect) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return s.connectError(err)
	}
	defer conn.Release()
	if err := eff.EnsureInbox(ctx); err != nil {
		return &SQLStartError{Usage: serverRefused(err), Err: fmt.Errorf("%s %q: %w", ref(fSQLInbox), s.Inbox, err)}
	}
	if err := s.Statement.Check(ctx, conn.Conn()); err != nil {
		return &SQLStartError{Usage: serverRefused(err), Err: fmt.Errorf("%s: PostgreSQL at %s refused the statement: %w", ref(fSQLExec), s.Desc, err)}
	}
	return nil
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
