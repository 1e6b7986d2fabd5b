// Package pgeffect is an external effect for guard mode whose writes land
// exactly once in PostgreSQL: each record runs one transaction that first
// inserts the record's business key into an inbox table (INSERT ... ON
// CONFLICT DO NOTHING RETURNING key), runs the caller's Work only when the
// key was new, and commits. Wrap it with pipeline.Guarded around a
// sink.Guard: the guard claims the key in Redis, the effect runs the
// transaction, the guard marks the key done.
//
//	eff, err := pgeffect.New(pool, "shardpipe_inbox", func(ctx context.Context, tx pgx.Tx, key string, r *sink.Record) error {
//		_, err := tx.Exec(ctx, "INSERT INTO orders_applied (order_id) VALUES ($1)", key)
//		return err
//	})
//	if err := eff.EnsureInbox(ctx); err != nil { ... }
//	applier := pipeline.GuardedBatch(guard, eff.DoBatch) // or pipeline.Guarded(guard, eff.Do)
//
// Guarantee: the inbox row and the Work's writes commit in one transaction,
// so a key the inbox holds has had its Work applied once and is not applied
// again: a crash after COMMIT and before the guard's done mark, a COMMIT
// whose answer was lost, a Redis claim that expired, a replay within the
// inbox's life all find the key and take the record as done without running
// the Work. This holds as far as PostgreSQL's commits are durable
// (synchronous_commit and fsync on) and as long as inbox rows are kept:
// Prune and Pruner delete only rows older than their cutoff, which must
// lie before every record still readable (the topic's retention).
//
// Cost: with DoBatch (pipeline.GuardedBatch), one transaction per batch:
// BEGIN, one INSERT of all the batch's keys into the inbox, the Work of
// each new key, COMMIT (one durable commit for the batch); a record the
// Work refuses is left out by running the transaction again without it.
// With Do (pipeline.Guarded), or with MaxInFlight, where every record is a
// batch of its own, one transaction per record.
//
// A Work error that PostgreSQL reports as the record's own fault (SQLSTATE
// class 22, data exception, or 23, integrity constraint violation: a CHECK
// or NOT NULL failing, a value out of range) rolls the transaction back,
// inbox row included, and is returned wrapping sink.ErrRejected, so the
// pipeline dead-letters the record and goes on; a Work error that wraps
// sink.ErrBadValue or sink.ErrRejected is returned as is. A database that
// cannot be used at all (no connection, a connection cut, SQLSTATE class 08
// or 57P: starting, shutting down, restarting; 53300: out of connections)
// wraps sink.ErrUnavailable: the pipeline retries the record until
// PostgreSQL is back, not counting the attempts against it, so an outage
// dead-letters nothing. Any other error (a lock or statement timeout, a
// serialization failure) is returned for the pipeline to retry as a failed
// attempt.
//
// Imports: sink (for sink.Record and its sentinels), pgx/v5 and the standard
// library.
package pgeffect
