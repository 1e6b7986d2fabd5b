package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names that accept a durability risk; refusals name them.
const (
	fAllowEviction      = settings.FlagAllowEviction
	fAllowNoPersistence = settings.FlagAllowNoPersistence
)

// redisDurability checks the ledger Redis (settings.CheckDurability)
// within timeout; a setting that breaks a ledger and that dc does not
// allow is a usage error (exit 2) naming the flag that accepts it.
func redisDurability(ctx context.Context, rdb redis.UniversalClient, dc admin.DurabilityConfig, timeout time.Duration,
	log *slog.Logger) (pipeline.Barrier, error) {
	b, err := settings.CheckDurability(ctx, rdb, dc, timeout, log)
	if err != nil {
		return nil, exitFor(err, kafkaConn{}, timeout)
	}
	return b, nil
}
