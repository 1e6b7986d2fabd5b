package settings

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/sink"
)

// Spec describes a ledger (record mode) or a guard (guard mode) by plain
// values, as the command's flags give them, and builds either for a topic
// with sink's options (the library's one way to configure them). Building
// costs what sink.NewLedger or sink.NewGuard costs: no Redis round trip.
type Spec struct {
	// Prefix is the key prefix of every ledger key (sink.WithPrefix).
	Prefix string
	// PerTopic keeps each topic's business keys apart: a topic's ledger
	// keys are Prefix + topic + ":" + key. false: one key space for every
	// topic (Prefix + key), so a key applied from one topic is suppressed
	// in the others.
	PerTopic bool
	// TTL is how long an entry lives after the last record that met its
	// key (sink.WithTTL).
	TTL time.Duration
	// Keys is where a record's business key comes from (sink.WithKeySource).
	Keys sink.KeySource
	// Totals is the ledger's effect (sink.WithEffect); nil: none. Guards ignore it.
	Totals *sink.Totals
	// Logger is where retries are logged (sink.WithLogger); nil: nowhere.
	Logger *slog.Logger
}

// PrefixFor returns the key prefix of topic's ledger keys: Prefix, or
// Prefix + topic + ":" when PerTopic.
func (s Spec) PrefixFor(topic string) string {
	if s.PerTopic {
		return s.Prefix + topic + ":"
	}
	return s.Prefix
}

// Ledger builds the ledger of topic's records (any topic's when not
// PerTopic) on c.
func (s Spec) Ledger(c redis.UniversalClient, topic string) (*sink.Ledger, error) {
	opts := []sink.LedgerOpt{sink.WithPrefix(s.PrefixFor(topic)), sink.WithTTL(s.TTL), sink.WithKeySource(s.Keys), sink.WithLogger(s.Logger)}
	if s.Totals != nil {
		opts = append(opts, sink.WithEffect(*s.Totals))
	}
	l, err := sink.NewLedger(c, opts...)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return l, nil
}

// Guard builds the guard of topic's records (any topic's when not
// PerTopic) on c, with claims held for lease (sink.WithLease).
func (s Spec) Guard(c redis.UniversalClient, topic string, lease time.Duration) (*sink.Guard, error) {
	g, err := sink.NewGuard(c, sink.WithPrefix(s.PrefixFor(topic)), sink.WithTTL(s.TTL), sink.WithKeySource(s.Keys), sink.WithLease(lease), sink.WithLogger(s.Logger))
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	return g, nil
}
