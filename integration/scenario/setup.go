package scenario

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/secure"
	"github.com/shardpipe/shardpipe/sink"
)

// Setup is the pipeline under test and where it runs. A scenario starts
// several pipelines from it (a consumer that crashes and one that resumes,
// members that join and leave), each with its own Applier built from the
// fields below.
//
// The records a scenario produces are orders: the record key is the order
// ID, which is also the business key, and the value is JSON such as
// {"order_id":"order-0-0007","customer":"c0","amount_cents":107}.
type Setup struct {
	// Brokers are the seed brokers (host:port) of the Kafka cluster.
	// Required.
	Brokers []string
	// Redis is the host:port of the Redis that holds the ledger. Required.
	// The scenario opens its own client (checked with PING) and closes it
	// when it returns.
	Redis string
	// Kafka is the TLS and SASL of every Kafka client the scenario makes:
	// its consumers, producers, admin and readers. Default: none.
	Kafka secure.Kafka
	// RedisSecurity is the TLS and ACL user of its Redis client. Default:
	// none.
	RedisSecurity secure.Redis
	// Protocol is the consumer group protocol: pipeline.Classic (the zero
	// value) or pipeline.Consumer (KIP-848).
	Protocol pipeline.Protocol
	// Options configure every pipeline after the scenario's own commit
	// policy (so your CommitEvery, CommitInterval, MaxBatch, timeouts and
	// Kafka options apply). The scenario sets brokers, topic, group, sink,
	// logger and observer itself, and adds what it needs last (a crash point,
	// a stall hook). Default: none.
	Options []pipeline.GroupOpt
	// Effect is your per-record handler. When set, each consumer applies
	// records through a sink.Guard (claim, effect, done) made with
	// GuardOptions, and the report counts Effect's successful calls per
	// business key (Report.EffectCalls). Default: none; see Sink.
	Effect pipeline.ExternalEffect
	// GuardOptions configure the sink.Guard an Effect runs through, after
	// the scenario's key prefix (sink.WithPrefix(Prefix)). Default: none.
	GuardOptions []sink.GuardOpt
	// Sink, when set, builds each consumer's Applier instead (for example a
	// Ledger with your sink.Effect, or, to prove a scenario bites, an Applier
	// with no ledger at all). prefix is the scenario's key prefix: keep the
	// ledger under it, since Report.ExactlyOnce reads it back from there.
	// With neither Effect nor Sink, consumers use a sink.Ledger (record
	// mode; Rebalance adds the totals effect). Effect and Sink exclude each
	// other.
	Sink func(rdb redis.UniversalClient, prefix string) (pipeline.Applier, error)
	// Logger receives the pipelines' logs, each tagged with its consumer's
	// name. Default: discarded.
	Logger *slog.Logger
	// Timeout bounds the whole scenario, report included. Default 3
	// minutes.
	Timeout time.Duration
	// Topic is the topic the scenario creates and produces its orders to
	// (Poison also creates Topic+".dlq"); it must not exist. Group is the
	// consumer group (Replay also uses Group+"-replay"). Prefix is the Redis
	// key prefix of the ledger. Empty ones get fresh random names
	// ("sp-crash-1a2b3c4d", "sp:crash:1a2b3c4d:"). A scenario deletes
	// nothing: the topics, groups and keys stay for the caller to inspect or
	// delete (the integration kit deletes them when the test ends).
	Topic, Group, Prefix string
}

// DefaultTimeout is Setup.Timeout's default.
const DefaultTimeout = 3 * time.Minute

// withDefaults checks s and fills its defaults and fresh names; kind names
// the scenario in the fresh names.
func (s Setup) withDefaults(kind string) (Setup, error) {
	if len(s.Brokers) == 0 || s.Redis == "" {
		return s, errors.New("scenario: Setup needs Brokers and Redis")
	}
	if s.Effect != nil && s.Sink != nil {
		return s, errors.New("scenario: Setup takes Effect or Sink, not both")
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Topic == "" || s.Group == "" || s.Prefix == "" {
		var rnd [4]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return s, err
		}
		id := hex.EncodeToString(rnd[:])
		if s.Topic == "" {
			s.Topic = "sp-" + kind + "-" + id
		}
		if s.Group == "" {
			s.Group = "sp-" + kind + "-" + id
		}
		if s.Prefix == "" {
			s.Prefix = "sp:" + kind + ":" + id + ":"
		}
	}
	return s, nil
}
