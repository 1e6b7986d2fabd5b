package sink

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// Spec describes a ledger (record mode) or a guard (guard mode) by plain
// values, as a command's flags give them, and builds either for a topic.
// Building costs what NewLedger or NewGuard costs: no Redis round trip.
type Spec struct {
	// Prefix is the key prefix of every ledger key (WithPrefix).
	Prefix string
	// PerTopic keeps each topic's business keys apart: a topic's ledger
	// keys are Prefix + topic + ":" + key. false: one key space for every
	// topic (Prefix + key), so a key applied from one topic is suppressed
	// in the others.
	PerTopic bool
	// TTL is how long an entry lives after the last record that met its
	// key (WithTTL).
	TTL time.Duration
	// Keys is where a record's business key comes from (WithKeySource).
	Keys KeySource
	// Totals is the ledger's effect (WithEffect); nil: none. Guards ignore it.
	Totals *Totals
	// Logger is where retries are logged (WithLogger); nil: nowhere.
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
func (s Spec) Ledger(c redis.UniversalClient, topic string) (*Ledger, error) {
	opts := []LedgerOpt{WithPrefix(s.PrefixFor(topic)), WithTTL(s.TTL), WithKeySource(s.Keys), WithLogger(s.Logger)}
	if s.Totals != nil {
		opts = append(opts, WithEffect(*s.Totals))
	}
	l, err := NewLedger(c, opts...)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return l, nil
}

// Guard builds the guard of topic's records (any topic's when not
// PerTopic) on c, with claims held for lease (WithLease).
func (s Spec) Guard(c redis.UniversalClient, topic string, lease time.Duration) (*Guard, error) {
	g, err := NewGuard(c, WithPrefix(s.PrefixFor(topic)), WithTTL(s.TTL), WithKeySource(s.Keys), WithLease(lease), WithLogger(s.Logger))
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	return g, nil
}
