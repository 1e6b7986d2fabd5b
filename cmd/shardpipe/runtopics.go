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
// than ttl, or infinite (admin.CheckRetention). A topic whose configuration
// cannot be read is logged at debug and not checked.
func warnRetention(ctx context.Context, adm *kadm.Client, topics []string, ttl time.Duration, log *slog.Logger) {
	rs, err := admin.CheckRetention(ctx, adm, ttl, topics...)
	if err != nil {
		log.Debug("cannot read topic configs; retention not checked", "err", err)
		return
	}
	for _, r := range rs {
		switch {
		case r.Err != nil:
			log.Debug("cannot read topic config; retention not checked", "topic", r.Topic, "err", r.Err)
		case r.Infinite():
			log.Warn("topic retention is infinite, longer than the ledger TTL: a record replayed after its ledger entry expired applies again",
				"topic", r.Topic, "retention", "infinite", "ttl", ttl)
		default:
			log.Warn("topic retention is longer than the ledger TTL: a record replayed after its ledger entry expired applies again",
				"topic", r.Topic, "retention", r.Retention, "ttl", ttl)
		}
	}
}
