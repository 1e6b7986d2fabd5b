package integration

import (
	"context"
	"testing"

	"github.com/shardpipe/shardpipe/integration/scenario"
)

// CrashBeforeCommit runs scenario.CrashBeforeCommit for the test: a worker
// dies after its effects landed and before their offsets were committed,
// and another consumer resumes. Names left empty in s are made unique to
// the test, and what they name is deleted when the test ends; a failure to
// run the scenario fails the test. A few seconds on a local broker.
func CrashBeforeCommit(ctx context.Context, t testing.TB, s scenario.Setup, cfg scenario.CrashConfig) *scenario.Report {
	t.Helper()
	return runScenario(ctx, t, "crash", s, func(ctx context.Context, s scenario.Setup) (*scenario.Report, error) {
		return scenario.CrashBeforeCommit(ctx, s, cfg)
	})
}

// Rebalance runs scenario.Rebalance for the test: members join and leave
// (gracefully, or crashing with cfg.CrashLeave) while records arrive. Names
// and failures as CrashBeforeCommit. About 10-20 seconds on a local broker
// with the defaults.
func Rebalance(ctx context.Context, t testing.TB, s scenario.Setup, cfg scenario.RebalanceConfig) *scenario.Report {
	t.Helper()
	return runScenario(ctx, t, "rebalance", s, func(ctx context.Context, s scenario.Setup) (*scenario.Report, error) {
		return scenario.Rebalance(ctx, s, cfg)
	})
}

// Zombie runs scenario.Zombie for the test: a stalled member wakes after
// its partitions moved and tries to apply and commit its stale batch. Names
// and failures as CrashBeforeCommit. A few seconds on a local broker.
func Zombie(ctx context.Context, t testing.TB, s scenario.Setup, cfg scenario.ZombieConfig) *scenario.Report {
	t.Helper()
	return runScenario(ctx, t, "zombie", s, func(ctx context.Context, s scenario.Setup) (*scenario.Report, error) {
		return scenario.Zombie(ctx, s, cfg)
	})
}

// Replay runs scenario.Replay for the test: a processed range is consumed
// again by a group whose offsets were moved back. Names and failures as
// CrashBeforeCommit. A few seconds on a local broker.
func Replay(ctx context.Context, t testing.TB, s scenario.Setup, cfg scenario.ReplayConfig) *scenario.Report {
	t.Helper()
	return runScenario(ctx, t, "replay", s, func(ctx context.Context, s scenario.Setup) (*scenario.Report, error) {
		return scenario.Replay(ctx, s, cfg)
	})
}

// Poison runs scenario.Poison for the test: records that cannot be decoded
// go through a crash, and each must land in the dead-letter topic
// <topic>.dlq exactly once. Names and failures as CrashBeforeCommit (the
// dead-letter topic of a test-made topic is deleted too). A few seconds on
// a local broker.
func Poison(ctx context.Context, t testing.TB, s scenario.Setup, cfg scenario.PoisonConfig) *scenario.Report {
	t.Helper()
	return runScenario(ctx, t, "poison", s, func(ctx context.Context, s scenario.Setup) (*scenario.Report, error) {
		return scenario.Poison(ctx, s, cfg)
	})
}

// RequireExactlyOnce fails the test unless r.ExactlyOnce holds: every
// produced business key applied exactly once (and an Effect run exactly
// once), nothing else applied, the ledger read back from Redis holding one
// finished claim per key naming a record that holds it, each poison record
// in the dead-letter topic once, and every partition's committed offset at
// its end.
func RequireExactlyOnce(t testing.TB, r *scenario.Report) {
	t.Helper()
	if err := r.ExactlyOnce(); err != nil {
		t.Fatal(err)
	}
}

// runScenario fills the names s leaves empty with names unique to t,
// deletes what they name when the test ends (the topic and its dead-letter
// topic, the keys under the prefix), and runs fn, failing the test on an
// error.
func runScenario(ctx context.Context, t testing.TB, name string, s scenario.Setup,
	fn func(context.Context, scenario.Setup) (*scenario.Report, error)) *scenario.Report {
	t.Helper()
	if len(s.Brokers) == 0 || s.Redis == "" {
		t.Fatal("integration: Setup needs Brokers and Redis (integration.Kafka(t), integration.Redis(t))")
	}
	kopts, err := s.Kafka.Opts()
	if err != nil {
		t.Fatalf("integration: Setup.Kafka: %v", err)
	}
	if s.Topic == "" {
		s.Topic = Topic(t)
		brokers, topic := s.Brokers, s.Topic
		t.Cleanup(func() {
			deleteTopic(t, brokers, topic, kopts...)
			deleteTopic(t, brokers, topic+".dlq", kopts...)
		})
	}
	if s.Group == "" {
		s.Group = Group(t)
	}
	if s.Prefix == "" {
		s.Prefix = RedisPrefix(t, newRedisClient(t, s.Redis, s.RedisSecurity))
	}
	r, err := fn(ctx, s)
	if err != nil {
		t.Fatalf("integration: %s scenario: %v", name, err)
	}
	return r
}
