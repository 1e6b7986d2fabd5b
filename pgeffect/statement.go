package pgeffect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shardpipe/shardpipe/sink"
)

// ErrMissingField is what a Statement's Work wraps (with sink.ErrBadValue)
// when a record's value lacks a field the statement names.
var ErrMissingField = errors.New("pgeffect: record value lacks a named argument")

// Statement is one SQL statement whose @name placeholders (pgx.NamedArgs)
// take the record value's top-level JSON fields: its Work runs it once per
// record. Each field is sent as text and PostgreSQL parses it as the
// parameter's type (a string "12" or a number 12 both fit a bigint; an
// object or array is its JSON text; null is NULL). It is safe for
// concurrent use.
type Statement struct {
	sql       string
	rewritten string   // $1..$n for the names, in order
	names     []string // the placeholders' names, in order of first use
}

// NewStatement parses sql's named placeholders (as pgx.NamedArgs does:
// @ then a letter or underscore, then letters, digits and underscores,
// outside quotes and comments). It does no I/O; Check prepares it.
func NewStatement(sql string) (*Statement, error) {
	if strings.TrimSpace(sql) == "" {
		return nil, errors.New("pgeffect: empty statement")
	}
	rewritten, _, err := pgx.NamedArgs{}.RewriteQuery(context.Background(), nil, sql, nil)
	if err != nil {
		return nil, fmt.Errorf("pgeffect: statement: %w", err)
	}
	names, err := placeholderNames(sql, rewritten)
	if err != nil {
		return nil, err
	}
	return &Statement{sql: sql, rewritten: rewritten, names: names}, nil
}

// Names returns the statement's placeholder names, in order of first use.
func (s *Statement) Names() []string { return append([]string(nil), s.names...) }

// Preparer is what Check needs: a *pgx.Conn (a pool's Acquire gives one).
type Preparer interface {
	Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error)
	Deallocate(ctx context.Context, name string) error
}

// Check prepares the statement on c (and deallocates it): PostgreSQL
// parses and plans it, so a syntax error or an unknown table, column or
// function fails here, before any record, with the server's error (a
// *pgconn.PgError). Two round trips.
func (s *Statement) Check(ctx context.Context, c Preparer) error {
	const name = "shardpipe_check"
	if _, err := c.Prepare(ctx, name, s.rewritten); err != nil {
		return fmt.Errorf("pgeffect: prepare %q: %w", s.sql, err)
	}
	if err := c.Deallocate(ctx, name); err != nil {
		return fmt.Errorf("pgeffect: deallocate the checked statement: %w", err)
	}
	return nil
}

// Work runs the statement in tx with r's value's fields as its named
// arguments (one round trip). A value that is not a JSON object, or that
// lacks a named field, wraps sink.ErrBadValue (and ErrMissingField, naming
// the field): the record is poison, nothing is sent.
func (s *Statement) Work(ctx context.Context, tx pgx.Tx, _ string, r *sink.Record) error {
	args, err := s.args(r.Value)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, s.sql, args); err != nil {
		return fmt.Errorf("pgeffect: statement: %w", err)
	}
	return nil
}

// args reads the named fields of value.
func (s *Statement) args(value []byte) (pgx.NamedArgs, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(value, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("%w: the value is not a JSON object: the statement's named arguments come from its fields", sink.ErrBadValue)
	}
	args := make(pgx.NamedArgs, len(s.names))
	for _, n := range s.names {
		raw, ok := fields[n]
		if !ok {
			return nil, fmt.Errorf("%w: %w: field %q (the statement's @%s) is missing", sink.ErrBadValue, ErrMissingField, n, n)
		}
		v, err := textOf(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: field %q: %w", sink.ErrBadValue, n, err)
		}
		args[n] = v
	}
	return args, nil
}

// textOf is a JSON value as the text PostgreSQL parses: nil for null, a
// string's contents, else the JSON text itself.
func textOf(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case string(raw) == "null":
		return nil, nil
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return s, nil
	}
	return string(raw), nil
}

// placeholderNames returns the names of orig's placeholders in order of
// their numbers, reading them where rewritten (pgx's rewrite of orig, each
// @name replaced by $n and nothing else changed) differs from orig: pgx's
// own lexer decides what is a placeholder.
func placeholderNames(orig, rewritten string) ([]string, error) {
	var names []string
	i, j := 0, 0
	for i < len(orig) && j < len(rewritten) {
		if orig[i] == rewritten[j] {
			i, j = i+1, j+1
			continue
		}
		if orig[i] != '@' || rewritten[j] != '$' {
			return nil, fmt.Errorf("pgeffect: statement: reading its placeholders at byte %d", i)
		}
		end := i + 1
		for end < len(orig) && isNameByte(orig[end]) {
			end++
		}
		k := j + 1
		n := 0
		for k < len(rewritten) && rewritten[k] >= '0' && rewritten[k] <= '9' {
			n = n*10 + int(rewritten[k]-'0')
			k++
		}
		if n == len(names)+1 {
			names = append(names, orig[i+1:end])
		}
		i, j = end, k
	}
	return names, nil
}

func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}
