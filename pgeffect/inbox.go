package pgeffect

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// DefaultInbox is the inbox table's name when none is given.
const DefaultInbox = "shardpipe_inbox"

// inboxSchema is the inbox table's columns (%s: its quoted name): key is the
// business key (topic:key with PerTopic), the primary key the ON CONFLICT
// tests; the others name the record that applied it.
const inboxSchema = `CREATE TABLE IF NOT EXISTS %s (
	key text PRIMARY KEY,
	topic text NOT NULL,
	kafka_partition integer NOT NULL,
	kafka_offset bigint NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// quoteTable quotes name, a table optionally qualified by its schema
// (schema.table), as one identifier per part.
func quoteTable(name string) (string, error) {
	parts := strings.Split(name, ".")
	if name == "" || len(parts) > 2 {
		return "", fmt.Errorf("pgeffect: inbox table %q: want table or schema.table", name)
	}
	for _, p := range parts {
		if p == "" {
			return "", fmt.Errorf("pgeffect: inbox table %q: empty name part", name)
		}
	}
	return pgx.Identifier(parts).Sanitize(), nil
}

// EnsureInbox creates the inbox table when it is missing; an existing
// table is left as it is. Processes that start together may all call it:
// the CREATE TABLE IF NOT EXISTS runs under a transaction-scoped advisory
// lock on the table's name, since PostgreSQL fails all but one of such a
// race with a unique violation in its catalog. It costs one transaction of
// three statements.
func (e *Effect) EnsureInbox(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "shardpipe inbox "+e.table); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, fmt.Sprintf(inboxSchema, e.table))
		return err
	})
	if err != nil {
		return fmt.Errorf("pgeffect: creating inbox table %s: %w", e.table, err)
	}
	return nil
}
