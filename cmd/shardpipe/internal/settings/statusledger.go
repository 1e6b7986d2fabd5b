package settings

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/sink"
)

// StatusLedger is status's optional ledger: with --redis given (flag or
// variable), status also shows the ledger's manifest.
type StatusLedger struct {
	// Redis is the ledger's Redis, loaded by the command's Redis group.
	Redis flagcheck.RedisTarget
	// Given says --redis was set; Prefix and Owned are --ledger-prefix
	// and --dlq-prefix.
	Given         bool
	Prefix, Owned string
}

// StatusLedgerGroup is the flags of sl besides its Redis; redisFlag names
// the Redis address flag the command defines.
func StatusLedgerGroup(sl *StatusLedger, redisFlag string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, _ *cliflags.Problems) {
		sl.Given, sl.Prefix, sl.Owned = c.IsSet(redisFlag), c.String(FlagLedgerPrefix), c.String(FlagDLQPrefix)
	}, &cli.StringFlag{Name: FlagLedgerPrefix, Value: "shardpipe:ledger:", Usage: "with --redis: the ledger whose manifest to show"},
		&cli.StringFlag{Name: FlagDLQPrefix, Value: DefaultOwnPrefix, Usage: "with --redis: the prefix the manifest lives under"})
}

// Manifest reads the ledger's manifest; nil without --redis or when the
// ledger has none. An error is Redis's.
func (sl StatusLedger) Manifest(ctx context.Context) (*sink.Manifest, error) {
	if !sl.Given {
		return nil, nil
	}
	rdb := sl.Redis.Client()
	defer rdb.Close()
	m, ok, err := sink.ReadManifest(ctx, rdb, sink.ManifestKey(sl.Owned, sl.Prefix))
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("redis %s: %w", sl.Redis.Desc, err)
		}
		return nil, err
	}
	return &m, nil
}
