package integration

import (
	"context"
	"testing"

	"github.com/shardpipe/shardpipe/internal/scenario"
)

// CrashConfig sizes CrashBeforeCommit. Zero fields take the seed chapter's
// values: 4 partitions of 250 records, a commit every 10 records, partition
// 0's worker dies after 37 attempts.
type CrashConfig struct {
	Partitions   int32
	PerPartition int
	CommitEvery  int // the scenario's commit policy; Setup.Options may override it
	Partition    int32
	CrashAfter   int
}

// CrashFigures are CrashBeforeCommit's own figures.
type CrashFigures struct {
	CrashAttempts int64 // the crashed worker's attempts (its effects landed)
	// Checkpoint is the crashed partition's committed offset after the
	// crash, read from the broker.
	Checkpoint int64
	// Replayed counts the crashed partition's records at or past Checkpoint
	// whose ledger keys Redis held when the resuming consumer started: the
	// landed records it re-reads. It is read from the broker and Redis, so
	// Report.Suppressed must equal it.
	Replayed int64
}

// CrashBeforeCommit runs the crash between effect and commit: a consumer
// applies every partition, but one partition's worker dies after CrashAfter
// effects landed and before their offsets were committed (it never commits
// again). A second consumer in the same group resumes that partition from
// its last commit, so the records between the commit and the crash come
// again. With a working ledger they are suppressed and each key's effect
// lands once; Crash.Replayed says how many came again. It takes a few
// seconds on a local broker.
func CrashBeforeCommit(ctx context.Context, t testing.TB, s Setup, cfg CrashConfig) *Report {
	t.Helper()
	rn := s.start(ctx, t)
	res, err := scenario.Crash(rn.ctx, rn.env, scenario.CrashConfig(cfg))
	if err != nil {
		t.Fatalf("integration: crash scenario: %v", err)
	}
	r := rn.finish(t, "crash before commit", res.Keys, res.Stats)
	r.Crash = &CrashFigures{CrashAttempts: res.CrashAttempts, Checkpoint: res.Checkpoint, Replayed: res.Replay}
	return r
}
