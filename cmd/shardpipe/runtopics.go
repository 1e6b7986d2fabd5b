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
	_ = rc.withAdmin(func(adm *kadm.Client) error {
		warnRetention(ctx, adm, rc.topics, rc.ttl, log)
		if rc.sqlEffect && rc.sql.Keep > 0 {
			warnInboxRetention(ctx, adm, rc.topics, rc.sql.Keep, log)
		}
		return nil
	})
}

// warnInboxRetention logs one warning per topic whose retention.ms is
// longer than keep (--sql-inbox-keep), or infinite: a record read again
// after its inbox row was pruned and its Redis claim is gone runs its SQL
// again. A topic whose configuration cannot be read is a debug line.
func warnInboxRetention(ctx context.Context, adm *kadm.Client, topics []string, keep time.Duration, log *slog.Logger) {
	rs, err := admin.CheckRetention(ctx, adm, keep, topics...)
	if err != nil {
		log.Debug("cannot read topic configs; retention not compared with --sql-inbox-keep", "err", err)
		return
	}
	for _, r := range rs {
		if r.Err != nil {
			log.Debug("cannot read topic config; retention not compared with --sql-inbox-keep", "topic", r.Topic, "err", r.Err)
			continue
		}
		var retention any = r.Retention
		if r.Infinite() {
			retention = "infinite"
		}
		log.Warn("topic retention is longer than --sql-inbox-keep: a record read again after its inbox row was pruned and its Redis claim is gone runs its SQL again",
			"topic", r.Topic, "retention", retention, "sql_inbox_keep", keep)
	}
}

// warnRetention logs one warning per topic whose retention.ms is longer
// than ttl, or infinite (admin.RetentionWarnings).
func warnRetention(ctx context.Context, adm *kadm.Client, topics []string, ttl time.Duration, log *slog.Logger) {
	admin.Log(ctx, log, admin.RetentionWarnings(ctx, adm, ttl, topics...))
}
