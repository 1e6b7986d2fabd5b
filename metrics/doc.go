// Package metrics exports a pipeline's per-partition counters to
// Prometheus: NewCollector returns a prometheus.Collector over a stats
// function (pipeline.Pipeline.Stats), as go-redis's redisprometheus does
// for a Redis client. Register it on any registry; it reads one snapshot per
// scrape, so the hot path pays nothing for metrics.
//
// Every series carries the labels topic and partition:
//
//	shardpipe_records_attempted_total      counter  records whose effects were attempted
//	shardpipe_effects_applied_total        counter  effects applied (the business key was new)
//	shardpipe_effects_suppressed_total     counter  effects suppressed by the ledger
//	shardpipe_records_dead_lettered_total  counter  poison records written to the dead-letter topic
//	shardpipe_dead_letter_replays_total    counter  poison records found already dead-lettered
//	shardpipe_commits_fenced_total         counter  commits refused as stale
//	shardpipe_landed_offset                gauge    offset below which every effect has landed
//	shardpipe_committed_offset             gauge    last offset this process committed
//	shardpipe_uncommitted_records          gauge    landed but not committed: what a crash would replay
//	shardpipe_partition_epoch              gauge    fencing epoch of the latest term
//	shardpipe_partition_held               gauge    1 while the partition is assigned here
//
// Imports: pipeline and the Prometheus client. pipeline never imports
// metrics.
package metrics
