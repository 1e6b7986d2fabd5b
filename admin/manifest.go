package admin

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/sink"
)

// LedgerMismatchError is a ledger whose manifest records other settings
// than a program gives: Fields names each, stored and given.
type LedgerMismatchError struct {
	// Key is the manifest's key.
	Key string
	// Stored is the manifest found.
	Stored sink.Manifest
	// Fields are the settings that differ.
	Fields []sink.ManifestField
}

// Error names the manifest and each setting that differs.
func (e *LedgerMismatchError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = fmt.Sprintf("%s %q, given %q", f.Name, f.Stored, f.Given)
	}
	return fmt.Sprintf("ledger manifest %s (written %s by %s): made with %s", e.Key,
		e.Stored.CreatedAt.Format("2006-01-02T15:04:05Z"), e.Stored.CreatedBy, strings.Join(parts, "; "))
}

// Unwrap returns ErrLedgerMismatch.
func (e *LedgerMismatchError) Unwrap() error { return ErrLedgerMismatch }

// CheckLedger is a program's one call before it applies records through a
// ledger: the manifest at key (sink.ManifestKey) must record given's
// effect, totals settings and key space, or it returns a
// *LedgerMismatchError (ErrLedgerMismatch) and the program must not start;
// a manifest of claims newer than this build reads is refused with an
// error wrapping sink.ErrClaimFormat (Manifest.CheckFormat);
// a ledger without a manifest gets given, which CheckLedger then returns
// as stored (written true). replace writes given whatever is there, to
// change a ledger on purpose (another effect or key space applies every
// retained record again). It costs one or two round trips.
func CheckLedger(ctx context.Context, rdb redis.UniversalClient, key string, given sink.Manifest, replace bool) (stored sink.Manifest, written bool, err error) {
	if !replace {
		m, ok, err := sink.ReadManifest(ctx, rdb, key)
		if err != nil {
			return sink.Manifest{}, false, err
		}
		if ok {
			if err := m.CheckFormat(); err != nil {
				return m, false, fmt.Errorf("admin: ledger manifest %s: %w", key, err)
			}
			if d := m.Differences(given); len(d) > 0 {
				return m, false, &LedgerMismatchError{Key: key, Stored: m, Fields: d}
			}
			return m, false, nil
		}
	}
	written, err = sink.WriteManifest(ctx, rdb, key, given, replace)
	if err != nil {
		return sink.Manifest{}, false, err
	}
	if !written { // another process wrote one since the read: check it
		return CheckLedger(ctx, rdb, key, given, false)
	}
	return given, true, nil
}
