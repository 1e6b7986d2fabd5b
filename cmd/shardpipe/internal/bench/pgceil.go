package bench

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// runPGCeiling is the PostgreSQL ceiling (l) and, with the inbox, (m): the
// same orders (keys, customers, amounts) the SQL mode (n) inserts, from
// ceilingStreams streams on a connection each, ceilingBatch orders per
// transaction sent as one pgx.Batch (BEGIN, the INSERTs, COMMIT: three
// round trips and one durable commit per batch), no Kafka, no Redis. (m)
// adds per order an inbox INSERT (a row of pgeffect's inbox, one
// statement an order: pgeffect's DoBatch inserts a batch's keys in one),
// in the same transaction, as topic spec.Topic, partition s, offset
// i/streams. Every INSERT must
// add its row: the tables are fresh.
func runPGCeiling(ctx context.Context, spec Spec) (Result, error) {
	db, err := sqlDB(spec.SQLURL, spec.SQLPasswordFile)
	if err != nil {
		return Result{}, err
	}
	cfg := db.Config.Copy()
	cfg.MaxConns = ceilingStreams
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return Result{}, fmt.Errorf("PostgreSQL at %s: %w", db.Desc, err)
	}
	defer pool.Close()
	if err := warmPool(ctx, pool, ceilingStreams); err != nil {
		return Result{}, fmt.Errorf("PostgreSQL at %s: %w", db.Desc, err)
	}
	insert := "INSERT INTO " + pgx.Identifier{spec.Table}.Sanitize() + " (order_id, customer, amount_cents) VALUES ($1, $2, $3)"
	inbox := ""
	if spec.Mode == PGInbox {
		inbox = "INSERT INTO " + pgx.Identifier{spec.Inbox}.Sanitize() +
			" (key, topic, kafka_partition, kafka_offset) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING RETURNING key"
	}
	return inStreams(spec, func(s int) (int64, error) { return pgStream(ctx, pool, spec, s, insert, inbox) })
}

// warmPool opens n connections of pool before the clock starts, so that
// connecting (and its password exchange) is not timed.
func warmPool(ctx context.Context, pool *pgxpool.Pool, n int) error {
	conns := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range n {
		c, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	return nil
}

// pgStream inserts orders s, s+streams, s+2*streams, ... in transactions of
// ceilingBatch, each with the inbox row first when inbox is not "", and
// counts the orders inserted.
func pgStream(ctx context.Context, pool *pgxpool.Pool, spec Spec, s int, insert, inbox string) (int64, error) {
	var applied int64
	var b pgx.Batch
	first := s // the batch's first order
	flush := func() error {
		n := b.Len()
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			br := tx.SendBatch(ctx, &b)
			for q := range n {
				tag, err := br.Exec()
				if err != nil {
					_ = br.Close()
					return fmt.Errorf("order %s: %w", Key(first+(q/stmtsPer(inbox))*ceilingStreams), err)
				}
				if tag.RowsAffected() != 1 {
					_ = br.Close()
					return fmt.Errorf("order %s: %q added %d rows, want 1 in fresh tables", Key(first+(q/stmtsPer(inbox))*ceilingStreams), tag, tag.RowsAffected())
				}
			}
			return br.Close()
		})
		if err != nil {
			return fmt.Errorf("PostgreSQL ceiling, stream %d, %d orders from %s: %w", s, n/stmtsPer(inbox), Key(first), err)
		}
		applied += int64(n / stmtsPer(inbox))
		b = pgx.Batch{}
		return nil
	}
	for i := s; i < spec.Records; i += ceilingStreams {
		if b.Len() == 0 {
			first = i
		}
		key := Key(i)
		if inbox != "" {
			b.Queue(inbox, key, spec.Topic, int32(s), int64(i/ceilingStreams))
		}
		b.Queue(insert, key, customer(i), amount(i))
		if b.Len() == ceilingBatch*stmtsPer(inbox) {
			if err := flush(); err != nil {
				return applied, err
			}
		}
	}
	if b.Len() > 0 {
		return applied, flush()
	}
	return applied, nil
}

// stmtsPer is how many statements a ceiling queues per order: 2 with the
// inbox, else 1.
func stmtsPer(inbox string) int {
	if inbox != "" {
		return 2
	}
	return 1
}
