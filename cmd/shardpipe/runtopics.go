package main

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/pipeline"
)

// checkRunTopics runs after preflight: with --on-poison dlq every
// dead-letter topic must exist (unavailable, exit 3, naming each missing
// one), and each consumed topic's retention is compared with the ledger TTL
// (logged by warnRetention). One admin client, within rc.connectTimeout.
func checkRunTopics(ctx context.Context, rc runConfig, log *slog.Logger) error {
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

// deadLetterTopics returns the dead-letter topic of each source, once each.
func deadLetterTopics(dlq string, sources []string) []string {
	seen := make(map[string]bool)
	var out []string
	for _, s := range sources {
		if t := pipeline.DeadLetterTopic(dlq, s); !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// warnRetention logs one warning per topic whose retention.ms is longer
// than ttl, or infinite (-1): a record replayed after its ledger entry
// expired (a group reset to earliest, a consumer far behind) would apply its
// effect a second time. A topic whose configuration cannot be read is
// logged at debug and not checked.
func warnRetention(ctx context.Context, adm *kadm.Client, topics []string, ttl time.Duration, log *slog.Logger) {
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		log.Debug("cannot read topic configs; retention not checked", "err", err)
		return
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			log.Debug("cannot read topic config; retention not checked", "topic", rc.Name, "err", rc.Err)
			continue
		}
		for _, c := range rc.Configs {
			if c.Key != "retention.ms" || c.Value == nil {
				continue
			}
			ms, err := strconv.ParseInt(*c.Value, 10, 64)
			if err != nil {
				continue
			}
			switch {
			case ms < 0:
				log.Warn("topic retention is infinite, longer than the ledger TTL: a record replayed after its ledger entry expired applies again",
					"topic", rc.Name, "retention", "infinite", "ttl", ttl)
			case time.Duration(ms)*time.Millisecond > ttl:
				log.Warn("topic retention is longer than the ledger TTL: a record replayed after its ledger entry expired applies again",
					"topic", rc.Name, "retention", time.Duration(ms)*time.Millisecond, "ttl", ttl)
			}
		}
	}
}
