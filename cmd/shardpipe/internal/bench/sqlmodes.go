package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
)

// The SQL modes: what `run --effect sql` gets against what PostgreSQL
// takes. Each writes the orders into a bench table of its own
// (order_id, customer, amount_cents) with the statement sqlStatement.
const (
	// (l) the orders' INSERTs batched, ceilingStreams streams of
	// ceilingBatch per transaction: no Kafka, no inbox, no Redis.
	PGCeiling Mode = "pg-ceiling"
	// (m) (l) with the inbox's INSERT ... ON CONFLICT DO NOTHING per
	// record in the same transactions: what the inbox itself costs.
	PGInbox Mode = "pg-inbox"
	// (n) the pipeline with the SQL effect as run builds it by default:
	// guard mode around pgeffect, run's --max-in-flight for it.
	SQLEffect Mode = "sql-effect"
	// (o) (n) in batches (--max-in-flight 0): one transaction per batch
	// (pipeline.GuardedBatch around pgeffect's DoBatch).
	SQLBatches Mode = "sql-batches"
)

// sqlModes are the SQL modes, in their order in the table.
var sqlModes = []Mode{PGCeiling, PGInbox, SQLEffect, SQLBatches}

// IsSQL reports whether m is one of the SQL modes (l, m, n, o), which need a
// PostgreSQL database.
func IsSQL(m Mode) bool { return m == PGCeiling || m == PGInbox || isSQLEffect(m) }

// isSQLEffect reports whether m runs the pipeline with the SQL effect (n, o).
func isSQLEffect(m Mode) bool { return m == SQLEffect || m == SQLBatches }

// sqlStatement is the bench table's statement as a user gives it to
// `run --sql-exec`: the named arguments are the order's JSON fields.
func sqlStatement(table string) string {
	return "INSERT INTO " + pgx.Identifier{table}.Sanitize() +
		" (order_id, customer, amount_cents) VALUES (@order_id, @customer, @amount_cents)"
}

// sqlTopic is the SQL mode's topic: the first SQLRecords orders (the
// orders the ceilings insert) in Partitions partitions, so that n drains
// it whole and its pipeline closes with nothing left in flight.
func (c Config) sqlTopic() string { return fmt.Sprintf("%s-sql-%d", c.Topic, c.SQLRecords) }

// sqlSpec completes spec for SQL mode spec.Mode in the round tagged tag:
// the database, fresh tables named after the round and the mode (the
// inbox for m, n and o), SQLRecords orders (n and o: sqlTopic), and for n
// the --max-in-flight run takes with --effect sql when it is not given, for
// o none (batches), and for both run's commit count (--commit-every is a
// what-if of d, e and f).
func (c Config) sqlSpec(spec Spec, tag string) Spec {
	spec.SQLURL, spec.SQLPasswordFile = c.SQLURL, c.SQLPasswordFile
	spec.Topic, spec.Records, spec.CommitEvery = c.sqlTopic(), c.SQLRecords, 0
	spec.Table = "shardpipe_bench_" + strings.ReplaceAll(tag, "-", "_") + "_" + labels[spec.Mode][0]
	if spec.Mode != PGCeiling {
		spec.Inbox = spec.Table + "_inbox"
	}
	spec.MaxInFlight = 0
	if spec.Mode == SQLEffect {
		var ic settings.InFlight
		ic.ForEffect(true)
		spec.MaxInFlight = ic.PerPartition
	}
	return spec
}

// sqlDB is the database of spec: its URL, with the password from its
// password file or, as run takes it, SHARDPIPE_SQL_PASSWORD or PGPASSWORD
// (inherited from the parent: no secret is in the spec).
func sqlDB(url, passwordFile string) (settings.SQLDB, error) {
	var bad cliflags.Problems
	db := settings.LoadSQLDB(url, passwordFile, &bad)
	if len(bad) > 0 {
		return settings.SQLDB{}, fmt.Errorf("bench: %s", strings.Join(bad, "; "))
	}
	if db.Config == nil {
		return settings.SQLDB{}, fmt.Errorf("bench: no PostgreSQL URL")
	}
	return db, nil
}

// openSQL opens the parent's side of the SQL modes (pgTables) when one of
// them is to be measured, or says in one line why they are skipped (no
// database given) and returns nil.
func (c Config) openSQL(ctx context.Context) (*pgTables, error) {
	if !slices.ContainsFunc(sqlModes, c.wants) {
		return nil, nil
	}
	if c.SQLURL == "" {
		c.Log.Warn("bench: SQL modes l, m, n and o skipped: no PostgreSQL database given (--sql-url, its password in --sql-password-file, SHARDPIPE_SQL_PASSWORD or PGPASSWORD)")
		return nil, nil
	}
	return openPGTables(ctx, c)
}
