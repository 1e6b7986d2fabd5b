// Package admin holds the operational checks and actions of shardpipe as a
// library, so that a program embedding pipeline.New gets the safety that
// `shardpipe run`, `replay`, `status` and `reset-offsets` give:
//
//   - Prepare: the checks run makes before it starts, in one call, and the
//     pipeline options they yield (the commit barrier, CountOnce marks);
//   - Redis preflight: CheckRedis (reachable, version 7.0+, not a cluster
//     node behind a single-node client) and CheckDurability (eviction
//     policy, persistence, the WAITAOF probe, and the pipeline.Barrier every
//     commit should wait for);
//   - Kafka preflight: CheckTopics, CheckRetention (topic retention against
//     the ledger TTL) and DeadLetterTopics;
//   - group status and lag for both group protocols: GroupLag and
//     DescribeGroup (lag to the last stable offset);
//   - offset resets: PlanReset, RequireNoMembers, RequireGroup and
//     ResetOffsets, which refuse while the group has members, and refuse a
//     group that does not exist unless CreateGroup;
//   - replay rules: ResumePlan (a rerun of a replay id continues the ranges
//     its first run stored) and CheckExpiry (records older than the ledger
//     TTL whose ledger entries are gone would apply again).
//
// Every function returns typed results and errors; none prints, logs or
// exits. A problem a check finds is a *CheckError wrapping a sentinel
// (ErrEviction, ErrTopicMissing, ...) and naming the setting, its value and
// the fix; a server that does not answer is an *UnreachableError wrapping
// ErrUnreachable. Several problems come joined (errors.Join), one per node,
// topic or setting, so a caller can report them all at once. The command
// maps them to text, JSON and exit codes.
//
// Every network call is bounded by the caller's context; the functions hold
// no state between calls and are safe for concurrent use.
//
// Imports: pipeline, sink and checkpoint, franz-go (kgo, kadm) and go-redis.
// pipeline, sink and checkpoint never import admin.
package admin
