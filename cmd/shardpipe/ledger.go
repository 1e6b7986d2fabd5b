package main

import (
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// Flag names of the ledger; run, replay and reset-offsets share them.
const (
	fLedgerPrefix = "ledger-prefix"
	fTTL          = "ttl"
	fKeyFrom      = "key-from"
	fKeySpace     = "key-space"
	fEffect       = "effect"
	fTotalsHash   = "totals-hash"
	fTotalsGroup  = "totals-group-field"
	fTotalsAmount = "totals-amount-field"
)

// Key spaces: shared (one for every topic, the ledger format before the
// flag existed) or per-topic.
const (
	keySpaceShared   = "shared"
	keySpacePerTopic = "per-topic"
)

// ledgerConfig says where the ledger is and what its effect does.
type ledgerConfig struct {
	redis    flagcheck.RedisTarget
	prefix   string
	ttl      time.Duration
	keys     sink.KeySource
	totals   *sink.Totals // nil: no effect
	keySpace string       // keySpaceShared or keySpacePerTopic
	// httpEffect is --effect http: guard mode around an HTTP call (run only;
	// its settings are runConfig.http).
	httpEffect bool
}

// ledgerGroups are the ledger's Redis (redisGroup) and the ledger's flags.
func ledgerGroups(lc *ledgerConfig) []cliflags.Group {
	return []cliflags.Group{redisGroup(&lc.redis), cliflags.NewGroup(lc.load,
		&cli.StringFlag{Name: fLedgerPrefix, Value: "shardpipe:ledger:",
			Usage: "prefix of every ledger key (prefix + business key); on Redis Cluster with --effect totals it needs a {hash tag}"},
		&cli.DurationFlag{Name: fTTL, Value: 7 * 24 * time.Hour,
			Usage: "how long a ledger entry lives after the last record that met its key; a record read again after that (a replay, a reset) applies again"},
		&cli.StringFlag{Name: fKeyFrom, Value: "key",
			Usage: "where the business key comes from: key (the record key), header:NAME or json:FIELD"},
		&cli.StringFlag{Name: fKeySpace, Value: keySpaceShared,
			Usage: "shared: one business key space for every topic (ledger key <ledger-prefix><key>), so a key applied from one topic is suppressed in the others, as for re-sends spread over topics; per-topic: each topic's keys apart (<ledger-prefix><topic>:<key>). replay needs the value run used; changing it on an existing ledger applies every retained record again"},
		&cli.StringFlag{Name: fEffect, Value: "none",
			Usage: "effect per business key: none or totals (HINCRBY a hash per group field), which land atomically with the ledger entry; or http (run only: POST to --http-url in guard mode: claim, call, mark done)"},
		&cli.StringFlag{Name: fTotalsHash, Value: "shardpipe:totals", Usage: "totals: the Redis hash that holds the sums"},
		&cli.StringFlag{Name: fTotalsGroup, Value: "customer", Usage: "totals: the JSON field whose value names the hash field"},
		&cli.StringFlag{Name: fTotalsAmount, Value: "amount_cents", Usage: "totals: the JSON integer field added to the sum"},
	)}
}

// load reads the ledger's flags (after --redis), adding one line per problem to bad.
func (lc *ledgerConfig) load(c *cli.Command, bad *cliflags.Problems) {
	var err error
	if lc.prefix = c.String(fLedgerPrefix); lc.prefix == "" {
		bad.Addf("%s: empty; ledger keys need a prefix of their own", flagRef(fLedgerPrefix))
	}
	if lc.ttl = c.Duration(fTTL); lc.ttl <= 0 {
		bad.Addf("%s %v: must be positive", flagRef(fTTL), lc.ttl)
	} else if lc.ttl < time.Millisecond {
		bad.Addf("%s %v: must be at least 1ms", flagRef(fTTL), lc.ttl)
	}
	if lc.keySpace = c.String(fKeySpace); lc.keySpace != keySpaceShared && lc.keySpace != keySpacePerTopic {
		bad.Addf("%s %q: want shared or per-topic", flagRef(fKeySpace), lc.keySpace)
	}
	if lc.keys, err = sink.ParseKeySource(c.String(fKeyFrom)); err != nil {
		bad.Addf("%s %q: want key, header:NAME or json:FIELD", flagRef(fKeyFrom), c.String(fKeyFrom))
	}
	switch e := c.String(fEffect); e {
	case "none":
	case "totals":
		t := sink.Totals{Hash: c.String(fTotalsHash), GroupField: c.String(fTotalsGroup), AmountField: c.String(fTotalsAmount)}
		for _, f := range []struct{ name, v string }{{fTotalsHash, t.Hash}, {fTotalsGroup, t.GroupField}, {fTotalsAmount, t.AmountField}} {
			if f.v == "" {
				bad.Addf("%s: empty; --effect totals needs it", flagRef(f.name))
			}
		}
		if lc.redis.Cluster && lc.prefix != "" && t.Hash != "" {
			if tag := flagcheck.HashTag(lc.prefix); tag == "" || tag != flagcheck.HashTag(t.Hash) {
				bad.Addf("%s %q and %s %q: on Redis Cluster both need the same {hash tag}, e.g. {orders}:ledger: and {orders}:totals",
					flagRef(fLedgerPrefix), lc.prefix, flagRef(fTotalsHash), t.Hash)
			}
		}
		lc.totals = &t
	case "http":
		lc.httpEffect = true
	default:
		bad.Addf("%s %q: want none, totals or http", flagRef(fEffect), e)
	}
}

// spec returns lc as a sink.Spec logging to log.
func (lc ledgerConfig) spec(log *slog.Logger) sink.Spec {
	return sink.Spec{Prefix: lc.prefix, PerTopic: lc.keySpace == keySpacePerTopic, TTL: lc.ttl, Keys: lc.keys, Totals: lc.totals, Logger: log}
}

// perTopic returns one applier for a shared key space (mk("")), else one
// per topic (pipeline.ForTopics), and logs the key space.
func (lc ledgerConfig) perTopic(topics []string, log *slog.Logger, mk func(topic string) (pipeline.Applier, error)) (pipeline.Applier, error) {
	log.Info("ledger key space", "key_space", lc.keySpace, "ledger_key", lc.spec(log).PrefixFor("<topic>")+"<business key>")
	return pipeline.ForTopics(topics, lc.keySpace == keySpacePerTopic, mk)
}

// newApplier returns the ledger run applies topics' records through.
func newApplier(lc ledgerConfig, topics []string, rdb redis.UniversalClient, log *slog.Logger) (pipeline.Applier, error) {
	return lc.perTopic(topics, log, func(t string) (pipeline.Applier, error) { return lc.spec(log).Ledger(rdb, t) })
}
