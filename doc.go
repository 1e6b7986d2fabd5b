// Package shardpipe consumes Kafka topics with effects that land exactly
// once: a Redis SET NX ledger keyed by business key suppresses replays,
// and each partition's offset is committed only after every earlier
// record's effect landed, fenced by the group generation or member epoch.
// This root package holds no code; it is the map of the module.
//
// # Code map
//
// Each package, what it owns, and what it may import (arrows point down;
// TestImportArrows enforces them):
//
//	checkpoint        per-partition tracker and fenced commit (Kafka, Redis, memory stores);
//	                  imports only internal/faults/commitfault
//	sink              the Redis ledger (record mode), the claim/done guard (guard mode), the
//	                  durability barrier; imports only internal/faults/guardfault
//	pipeline          group consumer, one worker per partition, epochs, poison records and
//	                  dead letters, replay, record tracing (Tracer); imports checkpoint, sink,
//	                  secure (an effect's error passes RedactError) and internal/faults
//	secure            TLS, Kafka SASL and Redis ACL-user settings turned into kgo and go-redis
//	                  options, secrets that never print, RedactURL (the one function every
//	                  URL shardpipe prints passes) and RedactError, and Diagnose, which names
//	                  the connection step that failed; imports no shardpipe package
//	admin             operational checks and actions: Redis preflight and durability, topic
//	                  and retention checks, group status and lag, offset resets, replay rules,
//	                  start-up warnings, why a run holds no partitions; imports pipeline, sink,
//	                  checkpoint, internal/typo
//	metrics           Prometheus collectors: pipeline stats and lag, latency histograms (a
//	                  pipeline.Meter), the Kafka client (kprom), the Redis pool, and the /metrics
//	                  server; imports pipeline
//	opshttp           the operator's HTTP endpoints: /healthz, /readyz and the /status page;
//	                  imports pipeline, metrics and secure
//	httpeffect        an HTTP POST as guard mode's external effect; imports sink and secure
//	pgeffect          a PostgreSQL transaction with an inbox row as guard mode's external
//	                  effect (exactly once in the database); imports sink and pgx
//	cmd/shardpipe     the command: its subcommands' texts, flags and config (composing the
//	                  groups of internal/settings), rendering, exit codes and wiring of the
//	                  packages above; imports any of them and internal/...; under 2,500
//	                  non-test lines (TestCmdStaysSmall)
//	integration       the test kit on real Kafka, Redis and PostgreSQL: servers, names, cleanup, and the
//	                  scenarios of integration/scenario run for a test; imports it, pipeline,
//	                  sink, checkpoint, secure, internal/...
//	integration/scenario
//	                  the fault scenarios (crash, rebalance, zombie, replay, poison) and their
//	                  report, behind the kit and the demo; imports pipeline, sink, checkpoint,
//	                  secure, internal/...; not testing, kfake or miniredis
//	integration/embedded
//	                  in-process Kafka (kfake) and Redis (miniredis) for the kit's users
//	internal/embedded in-process Kafka and Redis for the demo
//	internal/demo     the demo command's two scenarios on them, explained; imports
//	                  integration/scenario
//	internal/watch    records pipeline events for tests and scenarios to wait on
//	internal/orders   synthetic orders, their one JSON encoder, JSON lines, expected totals
//	internal/topics   the one topic-creation path (create, wait for every partition's leader)
//	internal/faults   fault points for tests and the scenarios (a worker's crash or stall, a
//	                  guard's crash), carried by the context of Run and Guard.Do; no public
//	                  API names them; imports checkpoint, sink, internal/faults/guardfault
//	internal/faults/guardfault
//	                  the guard's fault points, which sink reads; imports no shardpipe package
//	internal/faults/commitfault
//	                  a rewrite of checkpoint.Kafka's OffsetCommit requests (the zombie
//	                  scenario's stale commit), which checkpoint reads; imports no shardpipe package
//	internal/apicheck tests of the public API: docs, no fault seams, the docs' Go snippets compile and their links resolve
//	internal/produce  produce's sending loop: paced, acknowledged, interruptible
//	internal/buildinfo
//	                  the binary's version, revision and platform, for the version command;
//	                  the Kafka client ID shardpipe's clients carry
//	internal/cliflags commands of urfave/cli built from flag groups defined once: each flag's
//	                  environment variable, every problem of the command line, the environment
//	                  and the settings reported at once, "did you mean"; imports internal/typo only
//	internal/typo     the names closest to a mistyped one (edit distance), for cliflags and for
//	                  admin's missing topics and groups; imports no shardpipe package
//	internal/settings the flag groups whose settings configure the library (the ledger and
//	                  its effect, --effect http, Redis durability, commit policy, in-flight
//	                  effects, poison records, run's consuming, replay's range and pace,
//	                  reset-offsets' target, --partition-ids, --metrics-addr, produce's
//	                  orders, the demo): each group's flags, their checks into a typed
//	                  value, and the sink.Spec, appliers and pipeline options it gives;
//	                  imports internal/cliflags, internal/flagcheck, internal/orders,
//	                  pipeline, sink, httpeffect, admin, opshttp, secure
//	internal/flagcheck
//	                  checks of the command's settings: addresses, topic names, partition lists,
//	                  Redis targets and their URL options' ranges, numeric ranges, replay
//	                  bounds; imports pipeline, secure
//	internal/termui   progress displays of produce and replay (terminal bars or log lines),
//	                  run's progress and summary lines, produce's summary, the tables of
//	                  status, reset-offsets and replay, a resumed replay plan; imports
//	                  pipeline, admin, internal/orders
//	internal/bench    the bench command's modes and report (guard mode with the HTTP effect
//	                  against a receiver it serves among them); imports pipeline, sink, httpeffect,
//	                  secure
//	internal/otelenv  the command's tracing from the OTEL_* variables (off unless asked): the
//	                  exporters, the resource, redisotel on the Redis client; imports pipeline
//	internal/testcerts
//	                  a CA and certificates as PEM files, for TLS tests on real servers
//	internal/kafkainfo
//	                  the broker's version, for bench and kafkaready
//	internal/chaos    the fault suite driver (make chaos); imports internal/chaoscheck and
//	                  internal/clusters only
//	internal/clusters the Redis Cluster and three-broker Kafka of scripts/services.sh, driven for
//	                  the cluster tests and make chaos CLUSTER=1; imports no shardpipe package
//	internal/chaoscheck
//	                  the suite's independent checker: imports no shardpipe package
//	internal/cmd/chaos, internal/cmd/chaoscheck, internal/cmd/kafkaready, internal/cmd/receiver
//	                  small commands of the fault suite and the services script; receiver is
//	                  also the HTTP receiver process of the integration tests of --effect http
//	internal/cmd/composecheck
//	                  make test-docker's check of the compose stack (produce, drain, stop, kill):
//	                  judged by internal/chaoscheck
//	internal/recvtest the in-process HTTP receiver of the HTTP effect's unit tests (httpeffect's
//	                  and internal/settings'); imports no shardpipe package
//
// Rules: checkpoint and sink import neither pipeline nor each other;
// pipeline, checkpoint and sink import none of admin, metrics, opshttp,
// httpeffect, pgeffect; no library package (checkpoint, sink, pipeline, admin,
// metrics, opshttp, httpeffect, pgeffect) imports kfake, miniredis,
// internal/embedded, integration or cmd.
package shardpipe
