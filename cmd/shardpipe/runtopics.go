package main

import (
	"context"
	"log/slog"
	"time"

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

// warnRetention logs one warning per topic whose retention.ms is longer
// than ttl, or infinite (admin.RetentionWarnings).
func warnRetention(ctx context.Context, adm *kadm.Client, topics []string, ttl time.Duration, log *slog.Logger) {
	admin.Log(ctx, log, admin.RetentionWarnings(ctx, adm, ttl, topics...))
}
