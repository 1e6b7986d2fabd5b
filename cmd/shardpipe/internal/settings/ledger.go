package settings

import (
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// Flag names of the ledger that other groups' messages name.
const (
	FlagLedgerPrefix = "ledger-prefix"
	FlagKeyFrom      = "key-from"
	FlagEffect       = "effect"
	FlagLedgerChange = "ledger-change"
)

const (
	fTTL          = "ttl"
	fKeySpace     = "key-space"
	fTotalsHash   = "totals-hash"
	fTotalsGroup  = "totals-group-field"
	fTotalsAmount = "totals-amount-field"
)

// Ledger is the ledger's settings: where its keys are, how long they
// live, where a record's business key comes from and what its effect does.
type Ledger struct {
	// Spec is the ledger (its Logger is set where it is used); Spec.Totals
	// is --effect totals, nil for none and http.
	Spec Spec
	// HTTP is --effect http: guard mode around an HTTP call (run and
	// replay; its settings are an HTTP group's).
	HTTP bool
	// SQL is --effect sql: guard mode around a PostgreSQL transaction that
	// records the key in an inbox table (run and replay; its settings are an
	// SQL group's).
	SQL bool
	// Given says which of the settings the ledger's manifest records were
	// set (flag or variable), not left at their defaults: those are
	// checked against the manifest, the others taken from it.
	Given LedgerGiven
	// Change is --ledger-change: write the given settings into the
	// ledger's manifest, replacing what it holds.
	Change bool
	// totals are the totals flags as given or defaulted, whatever the
	// effect: a replay that takes --effect totals from the manifest checks
	// a --totals-hash it was given against the manifest's (Reconcile).
	totals sink.Totals
}

// LedgerGiven says which of the manifest's settings were given.
type LedgerGiven struct {
	Effect, KeySpace, TotalsHash, TotalsGroupField, TotalsAmountField bool
}

// GuardEffect names l's guard-mode effect, "http" or "sql", and is ""
// for the ledger's own effects (none, totals).
func (l Ledger) GuardEffect() string {
	switch {
	case l.HTTP:
		return "http"
	case l.SQL:
		return "sql"
	}
	return ""
}

// KeySpace names l's key space as --key-space does: shared or per-topic.
func (l Ledger) KeySpace() string {
	if l.Spec.PerTopic {
		return "per-topic"
	}
	return "shared"
}

// LedgerGroup is the ledger's flags, loaded into l. cluster is read when
// they load (an earlier group sets it): on Redis Cluster, --effect totals
// needs the ledger prefix and the totals hash in one hash slot.
func LedgerGroup(l *Ledger, cluster *bool) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) { l.load(c, bad, *cluster) },
		&cli.StringFlag{Name: FlagLedgerPrefix, Value: "shardpipe:ledger:",
			Usage: "prefix of every ledger key (prefix + business key); on Redis Cluster with --effect totals it needs a {hash tag}"},
		&cli.DurationFlag{Name: fTTL, Value: 7 * 24 * time.Hour,
			Usage: "how long a ledger entry lives after the last record that met its key; a record read again after that (a replay, a reset) applies again"},
		&cli.StringFlag{Name: FlagKeyFrom, Value: "key",
			Usage: "where the business key comes from: key (the record key), header:NAME or json:FIELD"},
		&cli.StringFlag{Name: fKeySpace, Value: "shared",
			Usage: "shared: one business key space for every topic (ledger key <ledger-prefix><key>), so a key applied from one topic is suppressed in the others, as for re-sends spread over topics; per-topic: each topic's keys apart (<ledger-prefix><topic>:<key>). replay needs the value run used; changing it on an existing ledger applies every retained record again"},
		&cli.StringFlag{Name: FlagEffect, Value: "none",
			Usage: "effect per business key: none or totals (HINCRBY a hash per group field), which land atomically with the ledger entry; or http (POST to --http-url in guard mode: claim, call, mark done), or sql (guard mode around a PostgreSQL transaction that inserts the keys into --sql-inbox-table and runs --sql-exec only for a new key: one per record with --max-in-flight, one per batch without)"},
		&cli.StringFlag{Name: fTotalsHash, Value: "shardpipe:totals", Usage: "totals: the Redis hash that holds the sums"},
		&cli.StringFlag{Name: fTotalsGroup, Value: "customer", Usage: "totals: the JSON field whose value names the hash field"},
		&cli.StringFlag{Name: fTotalsAmount, Value: "amount_cents", Usage: "totals: the JSON integer field added to the sum"},
		&cli.BoolFlag{Name: FlagLedgerChange,
			Usage: "write this command's --effect, --key-space and totals settings into the ledger's manifest, replacing what it holds, to change a ledger on purpose: another effect or key space makes every retained record apply again (as on a new ledger), another totals hash starts its sums from zero"})
}

// load reads the ledger's flags, adding one line per problem to bad.
func (l *Ledger) load(c *cli.Command, bad *cliflags.Problems, cluster bool) {
	*l = Ledger{Change: c.Bool(FlagLedgerChange), Given: LedgerGiven{Effect: c.IsSet(FlagEffect), KeySpace: c.IsSet(fKeySpace),
		TotalsHash: c.IsSet(fTotalsHash), TotalsGroupField: c.IsSet(fTotalsGroup), TotalsAmountField: c.IsSet(fTotalsAmount)}}
	l.totals = sink.Totals{Hash: c.String(fTotalsHash), GroupField: c.String(fTotalsGroup), AmountField: c.String(fTotalsAmount)}
	s := &l.Spec
	var err error
	if s.Prefix = c.String(FlagLedgerPrefix); s.Prefix == "" {
		bad.Addf("%s: empty; ledger keys need a prefix of their own", ref(FlagLedgerPrefix))
	}
	s.TTL = DurationIn(c, bad, fTTL, flagcheck.In(time.Millisecond, 10*8760*time.Hour, ""))
	switch ks := c.String(fKeySpace); ks {
	case "shared":
	case "per-topic":
		s.PerTopic = true
	default:
		bad.Addf("%s %q: want shared or per-topic", ref(fKeySpace), ks)
	}
	if s.Keys, err = sink.ParseKeySource(c.String(FlagKeyFrom)); err != nil {
		bad.Addf("%s %q: want key, header:NAME or json:FIELD", ref(FlagKeyFrom), c.String(FlagKeyFrom))
	}
	switch e := c.String(FlagEffect); e {
	case "none":
	case "totals":
		t := l.totals
		for _, f := range []struct{ name, v string }{{fTotalsHash, t.Hash}, {fTotalsGroup, t.GroupField}, {fTotalsAmount, t.AmountField}} {
			if f.v == "" {
				bad.Addf("%s: empty; --effect totals needs it", ref(f.name))
			}
		}
		if cluster && s.Prefix != "" && t.Hash != "" {
			if tag := flagcheck.HashTag(s.Prefix); tag == "" || tag != flagcheck.HashTag(t.Hash) {
				bad.Addf("%s %q and %s %q: on Redis Cluster both need the same {hash tag}, e.g. {orders}:ledger: and {orders}:totals",
					ref(FlagLedgerPrefix), s.Prefix, ref(fTotalsHash), t.Hash)
			}
		}
		s.Totals = &t
	case "http":
		l.HTTP = true
	case "sql":
		l.SQL = true
	default:
		bad.Addf("%s %q: want none, totals, http or sql", ref(FlagEffect), e)
	}
}

// PerTopic returns one applier for a shared key space (mk("")), else one
// per topic (pipeline.ForTopics), and logs the key space and the shape of
// a ledger key to log.
func (l Ledger) PerTopic(topics []string, log *slog.Logger, mk func(spec Spec, topic string) (pipeline.Applier, error)) (pipeline.Applier, error) {
	s := l.Spec
	s.Logger = log
	log.Info("ledger key space", "key_space", l.KeySpace(), "ledger_key", s.PrefixFor("<topic>")+"<business key>")
	return pipeline.ForTopics(topics, s.PerTopic, func(topic string) (pipeline.Applier, error) { return mk(s, topic) })
}

// Applier returns the ledger (record mode) that topics' records are
// applied through, on rdb, logging to log.
func (l Ledger) Applier(rdb redis.UniversalClient, topics []string, log *slog.Logger) (pipeline.Applier, error) {
	return l.PerTopic(topics, log, func(s Spec, topic string) (pipeline.Applier, error) { return s.Ledger(rdb, topic) })
}
