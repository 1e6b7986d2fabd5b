package main

import (
	"log/slog"
	"time"

	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/sink"
)

// Flag names of the ledger that other groups name.
const (
	fLedgerPrefix = settings.FlagLedgerPrefix
	fKeyFrom      = settings.FlagKeyFrom
	fEffect       = settings.FlagEffect
)

// ledgerConfig is the ledger's Redis and settings (settings.Ledger), with
// the fields run, replay and reset-offsets read copied out once loaded.
type ledgerConfig struct {
	redis      flagcheck.RedisTarget
	l          settings.Ledger
	prefix     string
	ttl        time.Duration
	totals     *sink.Totals // nil: no effect (reset-offsets clears it to ask about keys only)
	httpEffect bool         // --effect http (run only; its settings are runConfig.http)
}

// ledgerGroups are the ledger's Redis (redisGroup) and the ledger's flags.
func ledgerGroups(lc *ledgerConfig) []cliflags.Group {
	return []cliflags.Group{redisGroup(&lc.redis), cliflags.Then(settings.LedgerGroup(&lc.l, &lc.redis.Cluster), func() {
		lc.prefix, lc.ttl, lc.totals, lc.httpEffect = lc.l.Spec.Prefix, lc.l.Spec.TTL, lc.l.Spec.Totals, lc.l.HTTP
	})}
}

// spec returns the ledger as a sink.Spec with lc.totals, logging to log.
func (lc ledgerConfig) spec(log *slog.Logger) sink.Spec {
	s := lc.l.Spec
	s.Totals, s.Logger = lc.totals, log
	return s
}
