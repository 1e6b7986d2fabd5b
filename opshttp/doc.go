// Package opshttp serves a pipeline's endpoints for operators: /healthz
// (liveness: the process's loops are not wedged), /readyz (readiness: in
// the group, Redis writable, no partition stopped on failing commits, none
// fenced), each answering a JSON Report naming every check, and /status, a
// page of the group and its partitions that refreshes itself (its data at
// /status.json).
//
// A Probe reads a Source (a *pipeline.Pipeline is one) and, for readiness,
// writes one short-lived Redis key per probe. Mount Handler next to the
// Prometheus handler on the metrics address.
//
// Imports: pipeline and metrics (the lag the status page shows is the
// metrics' lag), and go-redis. pipeline never imports it.
package opshttp
