// Package shardpipe consumes Kafka topics with effects that land exactly
// once: a Redis SET NX ledger keyed by business key suppresses replays,
// and each partition's offset is committed only after every earlier
// record's effect landed, fenced by the group generation or member epoch.
// This root package holds no code; it is the map of the module.
//
// # Code map
//
// A path says what ships: the top-level packages are the libraries;
// cmd/shardpipe and cmd/shardpipe/internal/... are the command and what
// only it uses (a nested internal no library can import); integration is
// the test kit users import; internal/... holds what the libraries and the
// kit share; internal/harness/... is this repository's own test harness
// (the fault suite, its checker, server drivers, test certificates) and
// never ships. Each entry ends with the module packages it imports
// directly, tests excluded: TestCodeMap holds that line true against go
// list, and TestImportArrows enforces the rules below.
//
// The libraries:
//
//	checkpoint
//	    per-partition tracker and fenced commit (Kafka, Redis, memory stores)
//	    imports: internal/faults/commitfault
//	sink
//	    the Redis ledger (record mode), the claim/done guard (guard mode), the
//	    durability barrier, the commit marks of CountOnce
//	    imports: internal/faults/guardfault
//	pipeline
//	    group consumer, one worker per partition driving the partition engine,
//	    epochs, poison records and dead letters, replay, record tracing
//	    (Tracer); an effect's error passes secure.RedactError
//	    imports: checkpoint, internal/faults, secure, sink
//	secure
//	    TLS, Kafka SASL and Redis ACL-user settings turned into kgo and
//	    go-redis options, secrets that never print, RedactURL (the one function
//	    every URL shardpipe prints passes) and RedactError, and Diagnose, which
//	    names the connection step that failed
//	    imports: none
//	admin
//	    operational checks and actions: Redis preflight and durability, topic
//	    and retention checks, group status and lag, offset resets, replay rules,
//	    start-up warnings, why a run holds no partitions
//	    imports: internal/topics, internal/typo, pipeline, secure, sink
//	metrics
//	    Prometheus collectors: pipeline stats and lag, latency histograms (a
//	    pipeline.Meter), the Kafka client (kprom), the Redis pool, and the
//	    /metrics server
//	    imports: checkpoint, pipeline
//	opshttp
//	    the operator's HTTP endpoints: /healthz, /readyz and the /status page
//	    imports: metrics, pipeline, secure
//	httpeffect
//	    an HTTP POST as guard mode's external effect
//	    imports: secure, sink
//	pgeffect
//	    a PostgreSQL transaction with an inbox row as guard mode's external
//	    effect (exactly once in the database), on pgx
//	    imports: sink
//
// The command, and what only it uses:
//
//	cmd/shardpipe
//	    the command: its subcommands' texts, flags and config (composing the
//	    groups of cmd/shardpipe/internal/settings), exit codes and wiring
//	    imports: admin, checkpoint, cmd/shardpipe/internal/bench,
//	    cmd/shardpipe/internal/buildinfo, cmd/shardpipe/internal/cliflags,
//	    cmd/shardpipe/internal/demo, cmd/shardpipe/internal/flagcheck,
//	    cmd/shardpipe/internal/otelenv, cmd/shardpipe/internal/produce,
//	    cmd/shardpipe/internal/settings, cmd/shardpipe/internal/termui,
//	    internal/orders, opshttp, pgeffect, pipeline, secure, sink
//	cmd/shardpipe/internal/settings
//	    the flag groups whose settings configure the library (the ledger and
//	    its effect, --effect http and sql, Redis durability, commit policy,
//	    in-flight effects, poison records, run's consuming, replay's range and
//	    pace, reset-offsets' target, --partition-ids, --metrics-addr, produce's
//	    orders, the demo, the ledger manifest): each group's flags, their
//	    checks into a typed value, and the ledger Spec, appliers and pipeline
//	    options it gives
//	    imports: admin, cmd/shardpipe/internal/cliflags,
//	    cmd/shardpipe/internal/flagcheck, httpeffect, internal/orders, opshttp,
//	    pgeffect, pipeline, secure, sink
//	cmd/shardpipe/internal/cliflags
//	    commands of urfave/cli built from flag groups defined once: each flag's
//	    environment variable, every problem of the command line, the
//	    environment and the settings reported at once, "did you mean"
//	    imports: internal/typo
//	cmd/shardpipe/internal/flagcheck
//	    checks of the command's settings: addresses, topic names, partition
//	    lists, Redis targets and their URL options' ranges, numeric ranges,
//	    replay bounds
//	    imports: pipeline, secure
//	cmd/shardpipe/internal/termui
//	    progress displays of produce and replay (terminal bars or log lines),
//	    run's progress and summary lines, produce's summary, the tables of
//	    status, reset-offsets and replay, a resumed replay plan
//	    imports: admin, internal/orders, pipeline, sink
//	cmd/shardpipe/internal/bench
//	    the bench command's modes and report (guard mode with the HTTP effect
//	    against a receiver it serves, and the SQL effect as run builds it
//	    against PostgreSQL's ceilings, among them)
//	    imports: cmd/shardpipe/internal/cliflags,
//	    cmd/shardpipe/internal/settings, httpeffect, internal/kafkainfo,
//	    internal/orders, internal/topics, pgeffect, pipeline, secure, sink
//	cmd/shardpipe/internal/produce
//	    produce's sending loop: paced, acknowledged, interruptible
//	    imports: internal/orders
//	cmd/shardpipe/internal/otelenv
//	    the command's tracing from the OTEL_* variables (off unless asked): the
//	    exporters, the resource, redisotel on the Redis client
//	    imports: pipeline
//	cmd/shardpipe/internal/buildinfo
//	    the binary's version, revision and platform, for the version command;
//	    the Kafka client ID shardpipe's clients carry
//	    imports: none
//	cmd/shardpipe/internal/demo
//	    the demo command's two scenarios, explained
//	    imports: cmd/shardpipe/internal/embedded, integration/scenario, pipeline
//	cmd/shardpipe/internal/embedded
//	    in-process Kafka (kfake) and Redis (miniredis) for the demo
//	    imports: none
//
// The test kit users import:
//
//	integration
//	    the test kit on real Kafka, Redis and PostgreSQL: servers, names,
//	    cleanup, and the scenarios of integration/scenario run for a test
//	    imports: integration/scenario, internal/kafkainfo, internal/topics, secure
//	integration/scenario
//	    the fault scenarios (crash, rebalance, zombie, replay, poison) and
//	    their report, behind the kit and the demo; not testing, kfake or
//	    miniredis
//	    imports: checkpoint, internal/faults, internal/faults/commitfault,
//	    internal/orders, internal/topics, internal/watch, pipeline, secure, sink
//	integration/embedded
//	    in-process Kafka (kfake) and Redis (miniredis) for the kit's users
//	    imports: none
//
// Shared by the libraries, the command and the kit:
//
//	internal/faults
//	    fault points for tests and the scenarios (a worker's crash or stall, a
//	    guard's crash), carried by the context of Run and Guard.Do; no public
//	    API names them
//	    imports: checkpoint, internal/faults/guardfault, sink
//	internal/faults/guardfault
//	    the guard's fault points, which sink reads
//	    imports: none
//	internal/faults/commitfault
//	    a rewrite of checkpoint.Kafka's OffsetCommit requests (the zombie
//	    scenario's stale commit), which checkpoint reads
//	    imports: none
//	internal/watch
//	    records pipeline events for tests and scenarios to wait on
//	    imports: checkpoint, internal/faults, pipeline
//	internal/orders
//	    synthetic orders, their one JSON encoder, JSON lines, expected totals
//	    imports: none
//	internal/topics
//	    the one topic-creation path (create, wait for every partition's leader)
//	    imports: none
//	internal/typo
//	    the names closest to a mistyped one (edit distance), for cliflags and
//	    for admin's missing topics and groups
//	    imports: none
//	internal/kafkainfo
//	    the broker's version, for bench, the kit and kafkaready
//	    imports: none
//
// The repository's test harness (never ships):
//
//	internal/harness/apicheck
//	    tests of the public API: docs, no fault seams, the docs' Go snippets
//	    compile and their links resolve
//	    imports: none
//	internal/harness/chaos
//	    the fault suite driver (make chaos)
//	    imports: internal/harness/chaoscheck, internal/harness/clusters,
//	    internal/orders, internal/topics
//	internal/harness/chaoscheck
//	    the suite's independent checker
//	    imports: none
//	internal/harness/clusters
//	    the Redis Cluster and three-broker Kafka of scripts/services.sh, driven
//	    for the cluster tests and make chaos CLUSTER=1
//	    imports: none
//	internal/harness/testcerts
//	    a CA and certificates as PEM files, for TLS tests on real servers
//	    imports: none
//	internal/harness/recvtest
//	    the in-process HTTP receiver of the HTTP effect's unit tests
//	    imports: none
//	internal/harness/itest
//	    the helpers the integration tests share: the shardpipe binary run and
//	    its log lines parsed, private servers, a Redis Cluster, secured
//	    brokers, the receiver process, topics, offsets and ledger keys read
//	    back
//	    imports: integration, internal/harness/chaoscheck,
//	    internal/harness/clusters, internal/harness/testcerts, internal/orders,
//	    pipeline, sink
//	integration/cmdtest
//	    the tests of the shardpipe binary, run as users run it (tests only;
//	    the kit's own tests stay in integration)
//	    imports: none
//	internal/harness/cmd/chaos
//	    make chaos's command
//	    imports: internal/harness/chaos
//	internal/harness/cmd/chaoscheck
//	    the checker as a command, on a run's servers and files
//	    imports: internal/harness/chaoscheck
//	internal/harness/cmd/composecheck
//	    make test-docker's check of the compose stack (produce, drain, stop,
//	    kill), judged by internal/harness/chaoscheck
//	    imports: internal/harness/chaoscheck
//	internal/harness/cmd/kafkaready
//	    the services script's wait for a broker that answers Metadata
//	    imports: internal/kafkainfo
//	internal/harness/cmd/receiver
//	    the HTTP receiver process of make chaos and of the integration tests
//	    of --effect http; its calls file's lines are chaoscheck's Call
//	    imports: internal/harness/chaoscheck
//
// Rules (TestImportArrows): checkpoint and sink import neither pipeline nor
// each other; pipeline, checkpoint and sink import none of admin, metrics,
// opshttp, httpeffect, pgeffect; no library package (checkpoint, sink,
// pipeline, admin, metrics, opshttp, httpeffect, pgeffect) imports kfake,
// miniredis, integration or cmd, directly or through another package; no
// package outside internal/harness imports it, only tests do.
package shardpipe
