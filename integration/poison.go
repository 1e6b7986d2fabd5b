package integration

import (
	"context"
	"testing"

	"github.com/shardpipe/shardpipe/internal/scenario"
)

// PoisonConfig sizes Poison. Zero fields take the defaults: 4 partitions of
// 100 records, every 10th poison, partition 0's first worker dying after 25
// records, before its first commit (a commit every 50).
type PoisonConfig struct {
	Partitions   int32
	PerPartition int
	Every        int // every Every-th record is poison: no key, a value that is not JSON
	CrashAfter   int
	CommitEvery  int // Setup.Options may override it
}

// PoisonFigures are Poison's own figures.
type PoisonFigures struct {
	DLQTopic string
	// Poison names each poison record as "partition/offset"; DLQ counts
	// the dead-letter records found per source record (each must be 1),
	// and Stray those that name another topic.
	Poison []string
	DLQ    map[string]int
	Stray  int
	// DeadLetterReplays counts poison records a consumer found already
	// dead-lettered (after the crash) and did not write again.
	DeadLetterReplays int64
}

// Poison runs poison records through a crash: every Every-th record has no
// business key and a value that is not JSON. Each must be retried, written
// to the dead-letter topic <topic>.dlq (which the scenario creates) and
// committed past, so no partition stalls; partition 0's first worker dies
// after dead-lettering some and before committing them, and a second
// consumer resumes. Report.ExactlyOnce then also requires each poison
// record in the dead-letter topic exactly once. A few seconds on a local
// broker.
func Poison(ctx context.Context, t testing.TB, s Setup, cfg PoisonConfig) *Report {
	t.Helper()
	rn := s.start(ctx, t)
	t.Cleanup(func() { deleteTopic(t, s.Brokers, rn.env.Topic+".dlq") })
	res, err := scenario.Poison(rn.ctx, rn.env, scenario.PoisonConfig(cfg))
	if err != nil {
		t.Fatalf("integration: poison scenario: %v", err)
	}
	r := rn.finish(t, "poison", res.Keys, res.Stats)
	f := &PoisonFigures{DLQTopic: res.DLQTopic, DLQ: res.DLQ, Stray: res.Stray, DeadLetterReplays: res.DeadLetterReplays}
	for i, p := range res.Poison {
		f.Poison = append(f.Poison, scenario.PoisonSource(p.Partition, res.Offsets[i]))
	}
	r.Poison = f
	return r
}
