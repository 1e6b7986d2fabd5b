package pgeffect

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shardpipe/shardpipe/sink"
)

// Work is one record's writes, run in the transaction that records key in
// the inbox, only when the inbox did not hold key yet. It must do all its
// writes through tx and must not commit or roll it back.
type Work func(ctx context.Context, tx pgx.Tx, key string, r *sink.Record) error

// DB is what an Effect needs of its database: a *pgxpool.Pool (safe for
// concurrent records) or a single *pgx.Conn (one record at a time).
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Effect is the inbox transaction around a Work; see the package doc. It
// is safe for concurrent use when its DB is.
type Effect struct {
	db       DB
	table    string // quoted
	insert   string
	work     Work
	perTopic bool
}

// New returns an Effect writing through db, with its inbox in table
// (table or schema.table; DefaultInbox when empty). It does no I/O: call
// EnsureInbox to create the table.
func New(db DB, table string, work Work, opts ...Opt) (*Effect, error) {
	if db == nil || work == nil {
		return nil, errors.New("pgeffect: New: nil db or work")
	}
	if table == "" {
		table = DefaultInbox
	}
	q, err := quoteTable(table)
	if err != nil {
		return nil, err
	}
	e := &Effect{db: db, table: q, work: work,
		insert: "INSERT INTO " + q + " (key, topic, kafka_partition, kafka_offset) SELECT * FROM unnest($1::text[], $2::text[], $3::integer[], $4::bigint[]) ON CONFLICT (key) DO NOTHING RETURNING key"}
	for _, o := range opts {
		o(e)
	}
	return e, nil
}

// Do is the effect of record r with business key key (a
// pipeline.ExternalEffect): DoBatch of r alone, one transaction that
// inserts the key into the inbox and, when it was new, runs the Work, then
// commits. A key the inbox holds already returns nil without running the
// Work: it committed before. It costs three round trips (BEGIN, the inbox
// INSERT, COMMIT) plus the Work's.
//
// A failure before COMMIT rolls back and nothing happened: a transient one
// wraps sink.ErrNotApplied (the guard releases the claim and the pipeline
// retries), the record's own (see the package doc) sink.ErrRejected. A
// failed COMMIT's outcome is unknown: the error says so and a retry is safe,
// since a commit that did land left the key in the inbox. A failure of the
// connection itself (PostgreSQL down, restarting, out of connections: see
// the package doc) also wraps sink.ErrUnavailable, so the pipeline retries
// the record until the database is back without counting the attempts.
func (e *Effect) Do(ctx context.Context, key string, r *sink.Record) error {
	return e.DoBatch(ctx, []string{key}, []*sink.Record{r})[0]
}

// classify wraps err in sink.ErrRejected when PostgreSQL reports it as the
// record's own fault (SQLSTATE class 22 or 23), and in sink.ErrNotApplied
// otherwise: the transaction rolled back, so nothing happened either way.
func classify(err error) error {
	if errors.Is(err, sink.ErrRejected) || errors.Is(err, sink.ErrBadValue) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "23")) {
		return fmt.Errorf("%w: %w", sink.ErrRejected, err)
	}
	return notApplied(err)
}

// notApplied wraps err, a failure before COMMIT (rolled back: nothing
// happened), in sink.ErrNotApplied and, when PostgreSQL could not be used
// at all (unavailable), in sink.ErrUnavailable too.
func notApplied(err error) error {
	if unavailable(err) {
		return fmt.Errorf("%w: %w: %w", sink.ErrNotApplied, sink.ErrUnavailable, err)
	}
	return fmt.Errorf("%w: %w", sink.ErrNotApplied, err)
}

// at names r by topic, partition and offset.
func at(r *sink.Record) string { return fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset) }
