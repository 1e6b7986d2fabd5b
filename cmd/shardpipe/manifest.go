package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/sink"
)

// checkManifest reads the ledger's manifest (sink.Manifest, beside the
// dead-letter markers) before anything touches a record: a setting given
// that differs from it is refused (exit 2, naming the stored and the given
// value and the fixes), one not given is taken from it; a ledger without
// one (new, or made before manifests) gets one from the settings given,
// as does --ledger-change, which replaces it; unless write is false (a dry
// run), which writes nothing. The write is the func it returns, for the
// caller to run once every other check passed. A manifest of a newer
// claim format is refused.
func (sc *sinkConfig) checkManifest(ctx context.Context, rdb redis.UniversalClient, topics []string, write bool, log *slog.Logger) (func() error, error) {
	key := sink.ManifestKey(sc.p.Prefix, sc.l.Spec.Prefix)
	given := sc.l.Manifest(topics, "shardpipe "+moduleVersion())
	read := func() (sink.Manifest, bool, error) {
		rctx, cancel := context.WithTimeout(ctx, sc.connectTimeout)
		defer cancel()
		stored, ok, err := sink.ReadManifest(rctx, rdb, key)
		if err != nil {
			return stored, ok, unavailableErr(fmt.Sprintf("redis %s: %v", sc.redis.Desc, err))
		}
		if ok && stored.ClaimFormat > sink.ClaimFormat {
			return stored, ok, usageErr(fmt.Sprintf("the ledger under %s %q holds claims of format %d, written by %s; this shardpipe reads format %d: use that version or a newer one",
				flagRef(fLedgerPrefix), sc.l.Spec.Prefix, stored.ClaimFormat, stored.CreatedBy, sink.ClaimFormat))
		}
		return stored, ok, nil
	}
	stored, ok, err := read()
	if err != nil {
		return nil, err
	}
	if ok && !sc.l.Change {
		return func() error { return nil }, sc.reconcile(key, stored, log)
	}
	// Written once every other check passed: a run refused at start leaves
	// no manifest of its settings behind.
	return func() error {
		if !write { // a dry run writes nothing: it checks against the settings given
			log.Info("ledger manifest not written (dry run)", "key", key, "effect", given.Effect, "key_space", given.KeySpace)
			return nil
		}
		wctx, cancel := context.WithTimeout(ctx, sc.connectTimeout)
		defer cancel()
		wrote, err := sink.WriteManifest(wctx, rdb, key, given, sc.l.Change)
		if err != nil {
			return unavailableErr(fmt.Sprintf("redis %s: %v", sc.redis.Desc, err))
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
				return unavailableErr(fmt.Sprintf("redis %s: the ledger manifest %s was neither found nor written", sc.redis.Desc, key))
			}
			if d := now.Differences(given); len(d) > 0 {
				return usageErr(fmt.Sprintf("another process made the ledger under %s %q at the same time with other settings (%s %q, here %q): run again to take or refuse them",
					flagRef(fLedgerPrefix), sc.l.Spec.Prefix, d[0].Name, d[0].Stored, d[0].Given))
			}
		}
		return nil
	}, nil
}

// reconcile refuses sc's given ledger settings that differ from stored and
// takes the ones not given (settings.Ledger.Reconcile).
func (sc *sinkConfig) reconcile(key string, stored sink.Manifest, log *slog.Logger) error {
	problems, taken := sc.l.Reconcile(stored)
	if len(problems) > 0 {
		return usageErr(append(problems, fmt.Sprintf("the ledger's manifest (%s, written %s by %s) says what its claims stand for: give its settings or leave them out (run and replay take the manifest's), use a separate %s for another ledger, or pass %s to change this one on purpose (another effect or key space applies every retained record again; another totals hash starts from zero)",
			key, stored.CreatedAt.Format("2006-01-02T15:04:05Z"), stored.CreatedBy, flagRef(fLedgerPrefix), flagRef(settings.FlagLedgerChange)))...)
	}
	sc.ledgerConfig.httpEffect = sc.l.HTTP
	log.Info("ledger manifest", "key", key, "effect", stored.Effect, "key_space", stored.KeySpace, "totals_hash", stored.TotalsHash,
		"taken", strings.Join(taken, " "), "created_by", stored.CreatedBy)
	return nil
}

// moduleVersion is the main module's version, "devel" outside one.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
