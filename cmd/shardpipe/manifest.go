package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/buildinfo"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/sink"
)

// checkManifest is settings.Ledger.CheckManifest on sc's ledger, its
// refusals exit 2 and Redis's failures exit 3.
func (sc *sinkConfig) checkManifest(ctx context.Context, rdb redis.UniversalClient, topics []string, write bool, log *slog.Logger) (func() error, error) {
	key := sink.ManifestKey(sc.p.Prefix, sc.l.Spec.Prefix)
	exit := func(err error) error {
		var mp *settings.ManifestProblems
		if errors.As(err, &mp) {
			return usageErr(mp.Lines...)
		}
		if err != nil {
			return unavailableErr(err.Error())
		}
		return nil
	}
	w, err := sc.l.CheckManifest(ctx, rdb, key, sc.redis.Desc, topics, "shardpipe "+buildinfo.Version(), sc.connectTimeout, write, log)
	if err != nil {
		return nil, exit(err)
	}
	sc.ledgerConfig.httpEffect, sc.ledgerConfig.sqlEffect, sc.ledgerConfig.guardEffect = sc.l.HTTP, sc.l.SQL, sc.l.GuardEffect()
	return func() error { return exit(w()) }, nil
}
