package main

import (
	"log/slog"
	"time"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
)

// Flag names of the ledger that other groups name.
const (
	fLedgerPrefix = settings.FlagLedgerPrefix
	fKeyFrom      = settings.FlagKeyFrom
	fEffect       = settings.FlagEffect
)

// ledgerConfig is the ledger's Redis and settings (settings.Ledger), with
// the fields run and replay read copied out once loaded.
type ledgerConfig struct {
	redis      flagcheck.RedisTarget
	l          settings.Ledger
	ttl        time.Duration
	httpEffect bool // --effect http (its settings are effectConfig.http)
	sqlEffect  bool // --effect sql (its settings are effectConfig.sql)
	// guardEffect is "http" or "sql" for a guard-mode effect, else "".
	guardEffect string
}

// ledgerGroups are the ledger's Redis (redisGroup) and the ledger's flags.
func ledgerGroups(lc *ledgerConfig) []cliflags.Group {
	return []cliflags.Group{redisGroup(&lc.redis), cliflags.Then(settings.LedgerGroup(&lc.l, &lc.redis.Cluster), func() {
		lc.ttl, lc.httpEffect, lc.sqlEffect, lc.guardEffect = lc.l.Spec.TTL, lc.l.HTTP, lc.l.SQL, lc.l.GuardEffect()
	})}
}

// spec returns the ledger as a settings.Spec logging to log.
func (lc ledgerConfig) spec(log *slog.Logger) settings.Spec {
	s := lc.l.Spec
	s.Logger = log
	return s
}
