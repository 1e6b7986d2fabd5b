// Package pipeline consumes Kafka topics in a consumer group and lands each
// record's effect exactly once through a sink, committing offsets only past
// records whose effects have landed.
//
// Topic partitions are the shards. Each assigned partition gets one worker
// goroutine that keeps the partition's order; partitions run in parallel.
// The group generation (classic protocol) or member epoch (KIP-848 consumer
// protocol) at assignment is the worker's fencing epoch: once a partition is
// revoked or lost, its worker can no longer move the partition's offset
// (checkpoint.ErrStaleEpoch), and its late effects are suppressed by the
// sink's ledger because the new owner claimed the same business keys.
//
// The data path of one record: fetch -> partition queue (bounded in
// records and bytes, QueueRecords and QueueBytes; a full queue pauses
// fetching of that partition) -> worker batch -> sink.Apply
// (one Redis round trip per batch) -> tracker marks the offsets landed ->
// every CommitEvery records or CommitInterval: a synchronous offset commit.
//
// # The partition engine
//
// A partition's state for one term lives in one plain type, the engine
// (engine.go; losses in engineloss.go, the storm bounds in enginestorm.go,
// how a failed attempt is judged in enginefail.go, how the term ends in
// engineend.go):
// what was read and what landed (checkpoint.Tracker), when a commit is due
// and how a failed one backs off, which landed records a ledger loss may
// have taken and must be applied again before a commit passes them, which
// records count in Applied once committed past, and what failed for good
// and is held. It has no clock, no I/O and no goroutines; its scripts
// (testdata/engine, run by TestEngineScripts) and a randomized checker of
// its invariants (TestEngineInvariants) drive it alone. Both schedules
// drive the same engine: batches (worker.go: a batch is the records applied
// in one round trip; apply.go retries it and lands its known prefix) and
// MaxInFlight (inflight.go: records of different keys at once, ordered per
// key by keysched.go). The worker does the I/O and tells the engine each
// outcome: land (apply.go) for effects, commit.go for commits (reapply.go
// applies exposed records again first; countonce.go raises the group's
// commit mark), stormpath.go for records that failed for good
// (deadletter.go writes them), finish.go for a term's end. Each
// schedule's loop is a driver of the engine's step (enginestep.go): from
// the loop's state (the stop mode, a fence, what is queued and, in flight,
// held, running and waiting) next decides what to take or start and how
// the turn ends (wait, commit, wait at the bound, finish a range, exit,
// crash, fail), one decision for both schedules, checked in every small
// state by TestEngineStepExhaustive and scripted in testdata/engine/step.txt.
// A failed attempt is judged once for both (engine.onFailure: retry after
// a backoff, fail for good, leave to the next owner, or stop; scripted in
// testdata/failure, checked by TestEngineFailureExhaustive): batches ask
// it for a batch's first unsettled record (apply.go) and its poison
// records (poison.go), MaxInFlight for each record (inflight.go's
// settle). What a term leaves (records whose outcome is unknown with no
// retry to come, the failure that stops it, a crash point) is the
// engine's too (termEnd), and engine.exit says how the worker ends. The
// fault points tests inject (faults.go: BeforeApply, CrashAfter) sit in
// the drivers, each asked the same way by both schedules.
//
// On revoke a worker finishes its in-flight batch and commits synchronously
// before the rebalance goes on. On loss it stops without committing. Close
// drains the queues, commits and leaves the group.
//
// A poison record (the sink cannot decode its business key or effect input)
// is applied again, alone, PoisonAttempts times in all with capped backoff;
// then, with DeadLetters, it is written to a dead-letter topic exactly once
// and landed, or else it stops the pipeline with a *RecordError wrapping
// ErrPoison, its offset uncommitted. No record is dropped silently. Every
// record that fails for good (poison, or an effect given up or refused)
// takes one path: it is held, not dead-lettered, until a later record of
// its partition succeeds (or, after a success, the partition is idle for
// the commit interval), and the failures with no success after them are
// bounded over the pipeline (DeadLetterMaxRun, DeadLetterMaxShare): a
// poison storm, which says the configuration rather than the data is
// wrong, stops the pipeline with ErrPoisonStorm before committing past the
// run's first held record, having dead-lettered nothing of the run.
//
// While the sink cannot reach Redis, the partition's batch is retried with a
// backoff capped at 5s and a warning at most every 5s; nothing is committed
// past it, and the partition resumes by itself when Redis answers. When the
// worker's term ends first (a revoke, a loss, a stop), it commits what
// landed before the batch and, with a Finisher sink (Guarded), marks done
// the batch's effects that ran, within the revoke or shutdown timeout, so
// that the next owner does not run them again. A replay's partition that
// was read to its range's end is not being stopped: it retries its last
// batch and its final commit until they land.
//
// Replay runs the same workers outside any consumer group: it reads fixed
// offset ranges (PlanReplay: by offset or time, the end fixed at planning) by
// direct partition assignment, so a live group is not disturbed, and keeps its
// progress in a checkpoint.Redis under a replay id, fenced by an epoch that
// each run takes anew. DryRun reads the same records and asks the ledger
// (read-only) what a run would apply.
package pipeline
