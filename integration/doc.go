// Package integration is a kit for testing a shardpipe pipeline, yours or
// ours, on real Kafka and Redis: servers in one call, fresh names per test,
// and the faults that make effects land twice or not at all, as functions
// that return a report to assert on. The faults themselves are package
// github.com/shardpipe/shardpipe/integration/scenario (the scenario engine,
// usable outside tests too); this package runs them for a test and adds what
// only a test needs.
//
// # Servers
//
// Kafka(t) and Redis(t) return real servers' addresses: from KAFKA_BROKERS
// and REDIS_ADDR when set, else from containers started once per test binary
// when a Docker engine answers (testcontainers-go), else the test is skipped
// with a how-to (failed when SHARDPIPE_REQUIRE_INTEGRATION=1, as in CI). A
// test may opt in to in-process stand-ins instead of skipping:
//
//	brokers := integration.Kafka(t, integration.OrEmbedded(embedded.Servers{}))
//
// The stand-ins (kfake and miniredis, in integration/embedded) log a warning:
// they prove your handler's logic, not the servers' behaviour.
//
// Topic, Group and KeyPrefix give names unique to the test and the run;
// CreateTopic, NewKafkaClient, NewAdmin, NewRedisClient and RedisPrefix
// create and clean up with t.Cleanup, so tests run in parallel and repeat
// with -count=N against the same servers.
//
// # Scenarios
//
// A scenario.Setup describes your pipeline: the servers, the group
// protocol, your pipeline options (commit policy, batch size, timeouts) and
// your effect, a pipeline.ExternalEffect run through a sink.Guard, or your
// own Applier. CrashBeforeCommit, Rebalance, Zombie, Replay and Poison run
// the scenario package's functions of the same names with the Setup's empty
// names (topic, group, key prefix) made unique to the test, delete what
// they name when the test ends, fail the test when the scenario cannot run,
// and return the *scenario.Report:
//
//   - CrashBeforeCommit: a worker dies after its effects landed and before
//     their offsets were committed; another consumer resumes (the seed
//     chapter's test, any size and crash point).
//   - Rebalance: members join and leave (gracefully or by crashing) while
//     records arrive.
//   - Zombie: a stalled member wakes after its partitions moved and tries to
//     apply and commit its stale batch.
//   - Replay: a processed range is consumed again after its group's offsets
//     were moved back.
//   - Poison: records that cannot be decoded go through a crash; each must
//     land in the dead-letter topic exactly once.
//
// RequireExactlyOnce(t, r) fails the test unless every produced business
// key was applied exactly once (and your effect ran exactly once), nothing
// else was applied, the ledger read back from Redis holds one finished claim
// per produced key naming a record of the topic that holds that key, and
// nothing else, each poison record is in the dead-letter topic once, and
// every partition's committed offset reached its end (scenario.Report's
// ExactlyOnce). Reports also carry the pipelines' attempts, applied,
// suppressed, dead-lettered and fenced counts, the ledger as read
// (Report.Ledger) and each scenario's own figures (Report.Crash,
// Report.Zombie, ...), measured from the broker and Redis where the
// pipelines' own counts would make the check circular.
//
//	func TestOrderHandler(t *testing.T) {
//		s := scenario.Setup{
//			Brokers: integration.Kafka(t), Redis: integration.Redis(t),
//			Options: []pipeline.GroupOpt{pipeline.CommitEvery(50)},
//			Effect:  myHandler, // func(ctx, key string, r *sink.Record) error
//		}
//		r := integration.CrashBeforeCommit(t.Context(), t, s, scenario.CrashConfig{CrashAfter: 120})
//		integration.RequireExactlyOnce(t, r)
//	}
//
// Every scenario is known to bite: with the ledger switched off each one
// reports keys applied twice (see the package's TestScenariosBite), and a
// ledger entry deleted or rewritten behind the sink's back fails
// ExactlyOnce although the sink's answers look right (TestLedgerCheckBites).
//
// Cost: each scenario takes seconds on a local broker (Rebalance with its
// defaults, 10-20 s) and creates one topic and one or two groups; topics and
// ledger keys are deleted when the test ends.
package integration
