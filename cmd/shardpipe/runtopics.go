package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/admin"
)

// checkRunTopics runs after preflight: with --on-poison dlq every
// dead-letter topic must exist (created first with --create-dlq-topic) (unavailable, exit 3, naming each missing
// one), and each consumed topic's retention is compared with the ledger TTL
// (logged by warnRetention). One admin client, within rc.connectTimeout.
func checkRunTopics(ctx context.Context, rc runConfig, log *slog.Logger) error {
	if err := createDeadLetterTopics(ctx, rc, log); err != nil {
		return err
	}
	if err := rc.checkDeadLetterTopics(ctx, rc.brokers, rc.topics, rc.connectTimeout); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, rc.connectTimeout)
	defer cancel()
	cl, err := adminClient(rc.brokers)
	if err != nil {
		return failure(err)
	}
	defer cl.Close()
	warnRetention(ctx, kadm.NewClient(cl), rc.topics, rc.ttl, log)
	return nil
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
