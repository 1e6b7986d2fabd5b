package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Timings is a pipeline.Meter that observes the pipeline's latencies into
// Prometheus histograms, labelled by topic, and a prometheus.Collector of
// them. Pass it to pipeline.Measure and register it. Each observation is a
// few atomic adds; its methods are safe for concurrent use.
type Timings struct {
	age, ledger, commit *prometheus.HistogramVec
	errors              *prometheus.CounterVec
}

var _ pipeline.Meter = (*Timings)(nil)

// NewTimings returns Timings exporting
//
//	shardpipe_record_age_seconds             histogram  record timestamp to its effect applied
//	shardpipe_ledger_round_trip_seconds      histogram  one sink Apply (a ledger round trip for a batch)
//	shardpipe_commit_round_trip_seconds      histogram  one commit (durability wait and offset commit)
//	shardpipe_round_trip_errors_total        counter    failed ledger round trips and commits (label op)
//
// ConstLabels applies to every series.
func NewTimings(opts ...Opt) *Timings {
	var cfg collectorConfig
	for _, o := range opts {
		o.apply(&cfg)
	}
	hist := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets,
			ConstLabels: cfg.labels}, []string{"topic"})
	}
	rt := prometheus.ExponentialBuckets(0.0005, 2, 15) // 0.5ms .. 8s
	return &Timings{
		age: hist("shardpipe_record_age_seconds",
			"Age of a record (now minus its timestamp) when this process applied its effect.",
			prometheus.ExponentialBuckets(0.001, 4, 12)), // 1ms .. 70min
		ledger: hist("shardpipe_ledger_round_trip_seconds",
			"Duration of one sink call (a ledger round trip for a batch of records), failed or not.", rt),
		commit: hist("shardpipe_commit_round_trip_seconds",
			"Duration of one commit (the durability wait, if any, and the offset commit), failed or not.", rt),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shardpipe_round_trip_errors_total",
			Help: "Failed sink calls (op=ledger) and commits (op=commit).", ConstLabels: cfg.labels}, []string{"topic", "op"}),
	}
}

// SinkRoundTrip implements pipeline.Meter.
func (t *Timings) SinkRoundTrip(p checkpoint.Partition, _ int, d time.Duration, err error) {
	t.ledger.WithLabelValues(p.Topic).Observe(d.Seconds())
	if err != nil {
		t.errors.WithLabelValues(p.Topic, "ledger").Inc()
	}
}

// CommitRoundTrip implements pipeline.Meter.
func (t *Timings) CommitRoundTrip(p checkpoint.Partition, d time.Duration, err error) {
	t.commit.WithLabelValues(p.Topic).Observe(d.Seconds())
	if err != nil {
		t.errors.WithLabelValues(p.Topic, "commit").Inc()
	}
}

// Applied implements pipeline.Meter. A record with no timestamp is not
// observed.
func (t *Timings) Applied(p checkpoint.Partition, recordTime time.Time) {
	if recordTime.IsZero() {
		return
	}
	t.age.WithLabelValues(p.Topic).Observe(max(time.Since(recordTime), 0).Seconds())
}

// Describe implements prometheus.Collector.
func (t *Timings) Describe(ch chan<- *prometheus.Desc) {
	t.age.Describe(ch)
	t.ledger.Describe(ch)
	t.commit.Describe(ch)
	t.errors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (t *Timings) Collect(ch chan<- prometheus.Metric) {
	t.age.Collect(ch)
	t.ledger.Collect(ch)
	t.commit.Collect(ch)
	t.errors.Collect(ch)
}
