package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardpipe/shardpipe/pipeline"
)

// Collector is a prometheus.Collector over a pipeline's stats. Its methods
// are safe for concurrent use as far as the stats function is.
type Collector struct {
	stats func() []pipeline.PartitionStats
	defs  []metricDef
	descs []*prometheus.Desc
}

// NewCollector returns a Collector that reads stats (such as
// (*pipeline.Pipeline).Stats) once per scrape and exports the series listed
// in the package documentation. A scrape costs one stats call and one
// metric per series and partition.
func NewCollector(stats func() []pipeline.PartitionStats, opts ...Opt) *Collector {
	var cfg collectorConfig
	for _, o := range opts {
		o.apply(&cfg)
	}
	c := &Collector{stats: stats, defs: metricDefs()}
	for _, d := range c.defs {
		c.descs = append(c.descs, prometheus.NewDesc(d.name, d.help, []string{"topic", "partition"}, cfg.labels))
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.stats() {
		part := strconv.Itoa(int(s.Partition.Partition))
		for i, d := range c.defs {
			if d.known != nil && !d.known(s) {
				continue
			}
			ch <- prometheus.MustNewConstMetric(c.descs[i], d.typ, d.value(s), s.Partition.Topic, part)
		}
	}
}

// metricDef is one exported metric: name, help, type and how to read it.
type metricDef struct {
	name, help string
	typ        prometheus.ValueType
	value      func(pipeline.PartitionStats) float64
	known      func(pipeline.PartitionStats) bool // nil: always exported; else only when it returns true
}

// metricDefs lists the metrics, in the order they are exported.
func metricDefs() []metricDef {
	return []metricDef{
		{"shardpipe_records_attempted_total", "Records whose effects were attempted.", prometheus.CounterValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.Attempts) }, nil},
		{"shardpipe_effects_applied_total", "Effects applied (the business key was new to the ledger).", prometheus.CounterValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.Applied) }, nil},
		{"shardpipe_effects_suppressed_total", "Effects suppressed by the ledger (replays and duplicates).", prometheus.CounterValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.Suppressed) }, nil},
		{"shardpipe_records_dead_lettered_total", "Poison records written to the dead-letter topic.", prometheus.CounterValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.DeadLettered) }, nil},
		{"shardpipe_dead_letter_replays_total", "Poison records replayed after a crash or rebalance and found already in the dead-letter topic (not written again).", prometheus.CounterValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.DeadLetterReplays) }, nil},
		{"shardpipe_commits_fenced_total", "Commits refused as stale, by the local fence or the broker.", prometheus.CounterValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.Fenced) }, nil},
		{"shardpipe_landed_offset", "Offset below which every effect has landed (-1: none yet).", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.Landed) }, nil},
		{"shardpipe_committed_offset", "Last offset this process committed (-1: none yet).", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.Committed) }, nil},
		{"shardpipe_uncommitted_records", "Offsets landed in this term but not yet committed: what a crash now would replay (0 when not held).", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { return float64(Uncommitted(s)) }, nil},
		{"shardpipe_partition_epoch", "Fencing epoch of the latest term (generation or member epoch).", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.Epoch) }, nil},
		{"shardpipe_partition_held", "1 while the partition is assigned to this process.", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { return b2f(s.Held) }, nil},
		{"shardpipe_stable_offset", "Last stable offset of the partition (the end a read-committed consumer reads to), from the latest fetch.", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.StableOffset) }, knownLSO},
		{"shardpipe_lag_records", "Records between the group's committed offset and the partition's last stable offset, while held here.", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { l, _ := Lag(s); return float64(l) }, func(s pipeline.PartitionStats) bool { _, ok := Lag(s); return ok }},
		{"shardpipe_commit_failures", "Commits of the current term that failed in a row (0 once one lands).", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.CommitFailures) }, nil},
		{"shardpipe_partition_fenced", "1 while the partition's current term is fenced (a commit was refused as stale) and waits to be taken back.", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { return b2f(s.Held && s.TermFenced) }, nil},
		{"shardpipe_effects_in_flight", "Effects running now (pipeline.MaxInFlight).", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.InFlight) }, nil},
		{"shardpipe_effects_retrying", "Records whose effect failed and that wait for their retry (pipeline.MaxInFlight); the committed offset cannot pass the lowest.", prometheus.GaugeValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.Retrying) }, nil},
		{"shardpipe_effects_given_up_total", "Records whose effect failed EffectAttempts times, or was rejected, and that were dead-lettered.", prometheus.CounterValue,
			func(s pipeline.PartitionStats) float64 { return float64(s.EffectsGivenUp) }, nil},
	}
}

func knownLSO(s pipeline.PartitionStats) bool { return s.StableOffset >= 0 }

// Lag is how many records of a partition held here are not yet committed:
// its last stable offset (from the latest fetch) minus the group's committed
// offset (the last commit of this process, or where its term began when it
// has not committed yet). It is false when the partition is not held here
// or nothing was fetched yet. It trails the broker by up to one fetch.
func Lag(s pipeline.PartitionStats) (int64, bool) {
	if !s.Held || s.StableOffset < 0 {
		return 0, false
	}
	from := max(s.Committed, s.Start)
	if from < 0 {
		return 0, false
	}
	return max(s.StableOffset-from, 0), true
}

// Uncommitted is how many offsets of the current term have landed past the
// last commit: Landed minus the later of the last commit and the term's
// start, what a crash now would make the next owner read again. A term that
// began at a high offset after a restart or a reassignment counts from its
// start, not from 0; a partition this process no longer holds has nothing
// of its own to replay (0).
func Uncommitted(s pipeline.PartitionStats) int64 {
	if !s.Held || s.Landed < 0 {
		return 0
	}
	return max(s.Landed-max(s.Committed, s.Start), 0)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
