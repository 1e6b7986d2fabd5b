package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/admin"
)

// checkRetention compares each consumed topic's retention with the ledger
// TTL (warnRetention), within --connect-timeout.
func checkRetention(ctx context.Context, rc *runConfig, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, rc.connectTimeout)
	defer cancel()
	_ = rc.withAdmin(func(adm *kadm.Client) error { warnRetention(ctx, adm, rc.topics, rc.ttl, log); return nil })
}

// checkAccess: the principal may describe the group and the Redis user may
// reach the ledger's keys, read-only (admin.CheckAccess); a refusal is exit 3.
func checkAccess(ctx context.Context, rc *runConfig, rdb redis.UniversalClient) error {
	ctx, cancel := context.WithTimeout(ctx, rc.connectTimeout)
	defer cancel()
	keys := []string{rc.l.Spec.Prefix + "preflight-probe"}
	if rc.l.Spec.Totals != nil {
		keys = append(keys, rc.l.Spec.Totals.Hash)
	}
	return exitFor(rc.withAdmin(func(adm *kadm.Client) error {
		return admin.CheckAccess(ctx, adm, rc.group, rdb, rc.redis.Desc, keys...)
	}), rc.brokers, rc.connectTimeout)
}

// warnRetention logs one warning per topic whose retention.ms is longer
// than ttl, or infinite (admin.RetentionWarnings).
func warnRetention(ctx context.Context, adm *kadm.Client, topics []string, ttl time.Duration, log *slog.Logger) {
	admin.Log(ctx, log, admin.RetentionWarnings(ctx, adm, ttl, topics...))
}
