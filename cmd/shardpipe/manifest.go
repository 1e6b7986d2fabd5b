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
// as does --ledger-change, which replaces it.
func (sc *sinkConfig) checkManifest(ctx context.Context, rdb redis.UniversalClient, topics []string, log *slog.Logger) error {
	key := sink.ManifestKey(sc.p.Prefix, sc.l.Spec.Prefix)
	ctx, cancel := context.WithTimeout(ctx, sc.connectTimeout)
	defer cancel()
	given := sc.l.Manifest(topics, "shardpipe "+moduleVersion())
	stored, ok, err := sink.ReadManifest(ctx, rdb, key)
	if err != nil {
		return unavailableErr(fmt.Sprintf("redis %s: %v", sc.redis.Desc, err))
	}
	if !ok || sc.l.Change {
		if _, err := sink.WriteManifest(ctx, rdb, key, given, sc.l.Change); err != nil {
			return unavailableErr(fmt.Sprintf("redis %s: %v", sc.redis.Desc, err))
		}
		msg := "ledger manifest written: the ledger had none (new, or made before manifests) and records these settings from now on"
		if ok {
			msg = "ledger manifest replaced (--ledger-change)"
			log.Warn(msg, "key", key, "was_effect", stored.Effect, "was_key_space", stored.KeySpace, "was_totals_hash", stored.TotalsHash,
				"effect", given.Effect, "key_space", given.KeySpace, "totals_hash", given.TotalsHash)
			return nil
		}
		log.Info(msg, "key", key, "effect", given.Effect, "key_space", given.KeySpace, "totals_hash", given.TotalsHash)
		return nil
	}
	problems, taken := sc.l.Reconcile(stored)
	if len(problems) > 0 {
		return usageErr(append(problems, fmt.Sprintf("the ledger's manifest (%s, written %s by %s) says what its claims stand for: give its settings or leave them out (run and replay take the manifest's), use a separate %s for another ledger, or pass %s to change this one on purpose (another effect or key space applies every retained record again; another totals hash starts from zero)",
			key, stored.CreatedAt.Format("2006-01-02T15:04:05Z"), stored.CreatedBy, flagRef(fLedgerPrefix), flagRef(settings.FlagLedgerChange)))...)
	}
	sc.ledgerConfig.httpEffect, sc.ledgerConfig.sqlEffect, sc.ledgerConfig.guardEffect = sc.l.HTTP, sc.l.SQL, sc.l.GuardEffect()
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
