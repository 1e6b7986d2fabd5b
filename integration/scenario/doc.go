// Package scenario runs the faults that make effects land twice or not at
// all against a shardpipe pipeline, on any Kafka and Redis, and reports what
// happened: the engine behind the integration kit's scenarios and behind
// `shardpipe demo`. It does not import package testing: tests reach it
// through package integration (which adds unique names, cleanup and
// integration.RequireExactlyOnce), and programs call it directly.
//
// A Setup names the servers and describes your pipeline: the group
// protocol, your pipeline options, and your effect (a
// pipeline.ExternalEffect run through a sink.Guard) or your own Applier.
// Each scenario creates a topic, produces orders to it, runs the consumers
// the fault needs and returns a *Report:
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
// Report.ExactlyOnce returns nil only when every produced business key was
// applied exactly once (and your effect ran exactly once), nothing else was
// applied, the ledger read back from Redis holds one finished claim per
// produced key naming a record of the topic that holds that key, and
// nothing else, each poison record is in the dead-letter topic once, and
// every partition's committed offset reached its end. A Report also carries
// the pipelines' counts, the ledger as read (Report.Ledger) and the
// scenario's own figures (Report.Crash, Report.Rebalance, ...), measured
// from the broker and Redis where the pipelines' own counts would make a
// check circular.
//
//	r, err := scenario.CrashBeforeCommit(ctx, scenario.Setup{
//		Brokers: []string{"127.0.0.1:9092"}, Redis: "127.0.0.1:6379",
//		Effect:  charge, // func(ctx, key string, r *sink.Record) error
//	}, scenario.CrashConfig{CrashAfter: 120})
//	if err != nil {
//		return err // the scenario could not run
//	}
//	if err := r.ExactlyOnce(); err != nil {
//		return err // an effect landed twice, or not at all
//	}
//	fmt.Println(r.Line()) // shard0=250 crash_attempts=120 checkpoint=... replay=... applied=1000 ...
//
// Cost: each scenario takes seconds on a local broker (Rebalance with its
// defaults, 10-20 s), creates one topic (Poison two) and one group (Replay
// two), and writes one ledger key per order. It deletes nothing: pass names
// in the Setup to find them afterwards.
package scenario
