package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/sink"
)

// statusLedger is status's optional ledger: with --redis given (flag or
// variable), status also shows the ledger's manifest.
type statusLedger struct {
	redis         flagcheck.RedisTarget
	given         bool
	prefix, owned string
}

// statusLedgerGroup is the flags of statusLedger.
func statusLedgerGroup(sl *statusLedger) []cliflags.Group {
	return []cliflags.Group{redisGroup(&sl.redis), cliflags.NewGroup(func(c *cli.Command, _ *cliflags.Problems) {
		sl.given, sl.prefix, sl.owned = c.IsSet(fRedis), c.String(fLedgerPrefix), c.String(settings.FlagDLQPrefix)
	}, &cli.StringFlag{Name: fLedgerPrefix, Value: "shardpipe:ledger:", Usage: "with --redis: the ledger whose manifest to show"},
		&cli.StringFlag{Name: settings.FlagDLQPrefix, Value: settings.DefaultOwnPrefix, Usage: "with --redis: the prefix the manifest lives under"})}
}

// manifest reads the ledger's manifest; nil without --redis or when the
// ledger has none.
func (sl statusLedger) manifest(ctx context.Context) (*sink.Manifest, error) {
	if !sl.given {
		return nil, nil
	}
	rdb := sl.redis.Client()
	defer rdb.Close()
	m, ok, err := sink.ReadManifest(ctx, rdb, sink.ManifestKey(sl.owned, sl.prefix))
	if err != nil {
		return nil, unavailableErr(fmt.Sprintf("redis %s: %v", sl.redis.Desc, err))
	}
	if !ok {
		return nil, nil
	}
	return &m, nil
}
