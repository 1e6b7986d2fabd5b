package settings

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/sink"
)

// CheckManifest reads the ledger's manifest at key (sink.Manifest) before
// anything touches a record: a setting given that differs from it is
// refused (a *ManifestProblems: exit 2 for the command, naming the stored
// and the given value and the fixes), one not given is taken from it (l is
// changed); a ledger without one (new, or made before manifests) gets one
// from the settings given, as does --ledger-change, which replaces it,
// unless write is false (a dry run). The write is the func it returns, for
// the caller to run once every other check passed; another process's
// first manifest written meanwhile is checked against. A manifest of a
// newer claim format is refused. Any other error is Redis's (unreachable).
func (l *Ledger) CheckManifest(ctx context.Context, rdb redis.UniversalClient, key, redisDesc string, topics []string, version string, timeout time.Duration, write bool, log *slog.Logger) (func() error, error) {
	given := l.Manifest(topics, version)
	read := func() (sink.Manifest, bool, error) {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		stored, ok, err := sink.ReadManifest(rctx, rdb, key)
		if err != nil {
			return stored, ok, unreachable(fmt.Sprintf("redis %s: %v", redisDesc, err))
		}
		if ok && stored.CheckFormat() != nil { // the check admin.CheckLedger makes, worded with the flag
			return stored, ok, refusal(fmt.Sprintf("the ledger under %s %q holds claims of format %d, written by %s; this shardpipe reads format %d: use that version or a newer one",
				ref(FlagLedgerPrefix), l.Spec.Prefix, stored.ClaimFormat, stored.CreatedBy, sink.ClaimFormat))
		}
		return stored, ok, nil
	}
	stored, ok, err := read()
	if err != nil {
		return nil, err
	}
	if ok && !l.Change {
		return func() error { return nil }, l.reconcileManifest(key, stored, log)
	}
	// Written once every other check passed: a run refused at start leaves
	// no manifest of its settings behind.
	return func() error {
		if !write { // a dry run writes nothing: it checks against the settings given
			log.Info("ledger manifest not written (dry run)", "key", key, "effect", given.Effect, "key_space", given.KeySpace)
			return nil
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		wrote, err := sink.WriteManifest(wctx, rdb, key, given, l.Change)
		if err != nil {
			return unreachable(fmt.Sprintf("redis %s: %v", redisDesc, err))
		}
		switch {
		case wrote && ok:
			log.Warn("ledger manifest replaced (--ledger-change)", "key", key, "was_effect", stored.Effect, "was_key_space", stored.KeySpace,
				"was_totals_hash", stored.TotalsHash, "effect", given.Effect, "key_space", given.KeySpace, "totals_hash", given.TotalsHash)
		case wrote:
			log.Info("ledger manifest written: the ledger had none (new, or made before manifests) and records these settings from now on",
				"key", key, "effect", given.Effect, "key_space", given.KeySpace, "totals_hash", given.TotalsHash)
		default: // another process wrote the first manifest since the read: its settings must be these
			now, found, err := read()
			if err != nil {
				return err
			}
			if !found {
				return unreachable(fmt.Sprintf("redis %s: the ledger manifest %s was neither found nor written", redisDesc, key))
			}
			if d := now.Differences(given); len(d) > 0 {
				return refusal(fmt.Sprintf("another process made the ledger under %s %q at the same time with other settings (%s %q, here %q): run again to take or refuse them",
					ref(FlagLedgerPrefix), l.Spec.Prefix, d[0].Name, d[0].Stored, d[0].Given))
			}
		}
		return nil
	}, nil
}

// reconcileManifest refuses l's given ledger settings that differ from stored and
// takes the ones not given (Reconcile).
func (l *Ledger) reconcileManifest(key string, stored sink.Manifest, log *slog.Logger) error {
	problems, taken := l.Reconcile(stored)
	if len(problems) > 0 {
		return &ManifestProblems{Lines: append(problems, fmt.Sprintf("the ledger's manifest (%s, written %s by %s) says what its claims stand for: give its settings or leave them out (run and replay take the manifest's), use a separate %s for another ledger, or pass %s to change this one on purpose (another effect or key space applies every retained record again; another totals hash starts from zero)",
			key, stored.CreatedAt.Format("2006-01-02T15:04:05Z"), stored.CreatedBy, ref(FlagLedgerPrefix), ref(FlagLedgerChange)))}
	}
	log.Info("ledger manifest", "key", key, "effect", stored.Effect, "key_space", stored.KeySpace, "totals_hash", stored.TotalsHash,
		"taken", strings.Join(taken, " "), "created_by", stored.CreatedBy)
	return nil
}

// ManifestProblems are the lines of a refusal by the ledger's manifest:
// settings given that differ from it, and the fixes.
type ManifestProblems struct {
	// Lines are the problems, one line each, and the fixes last.
	Lines []string
}

// Error joins the lines.
func (p *ManifestProblems) Error() string { return strings.Join(p.Lines, "; ") }

// refusal is a one-line *ManifestProblems.
func refusal(line string) error { return &ManifestProblems{Lines: []string{line}} }

// ManifestUnreachable is Redis failing a manifest read or write.
type ManifestUnreachable struct {
	// Line names the Redis and the cause.
	Line string
}

// Error returns the line.
func (e *ManifestUnreachable) Error() string { return e.Line }

// unreachable is a *ManifestUnreachable.
func unreachable(line string) error { return &ManifestUnreachable{Line: line} }
