package metrics_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/metrics"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestUncommitted: uncommitted work counts from the later of the last commit
// and the start of the current term, and is 0 for a partition not held.
func TestUncommitted(t *testing.T) {
	tests := []struct {
		name string
		s    pipeline.PartitionStats
		want int64
	}{
		{"nothing landed", pipeline.PartitionStats{Held: true, Start: -1, Landed: -1, Committed: -1}, 0},
		{"first term from 0, no commit", pipeline.PartitionStats{Held: true, Start: 0, Landed: 40, Committed: -1}, 40},
		{"fresh term at a high offset, no commit yet", pipeline.PartitionStats{Held: true, Start: 1_000_000, Landed: 1_000_025, Committed: -1}, 25},
		{"after a commit", pipeline.PartitionStats{Held: true, Start: 1_000_000, Landed: 1_000_025, Committed: 1_000_020}, 5},
		{"all committed", pipeline.PartitionStats{Held: true, Start: 0, Landed: 40, Committed: 40}, 0},
		{"commit of an earlier term", pipeline.PartitionStats{Held: true, Start: 500, Landed: 510, Committed: 300}, 10},
		{"not held", pipeline.PartitionStats{Held: false, Start: 0, Landed: 40, Committed: 30}, 0},
		{"not held, never committed", pipeline.PartitionStats{Held: false, Start: 1_000_000, Landed: 1_000_025, Committed: -1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := metrics.Uncommitted(tt.s); got != tt.want {
				t.Fatalf("Uncommitted(%+v) = %d, want %d", tt.s, got, tt.want)
			}
		})
	}
}

// TestLag: lag runs from the group's committed offset (this process's last
// commit, or its term's start before one) to the last stable offset, and
// is unknown for a partition not held or not fetched yet.
func TestLag(t *testing.T) {
	tests := []struct {
		name  string
		s     pipeline.PartitionStats
		want  int64
		known bool
	}{
		{"not fetched yet", pipeline.PartitionStats{Held: true, Start: -1, Committed: -1, StableOffset: -1}, 0, false},
		{"not held", pipeline.PartitionStats{Held: false, Start: 0, Committed: 10, StableOffset: 50}, 0, false},
		{"no commit yet: from the term's start", pipeline.PartitionStats{Held: true, Start: 1000, Committed: -1, StableOffset: 1500}, 500, true},
		{"after a commit", pipeline.PartitionStats{Held: true, Start: 1000, Committed: 1400, StableOffset: 1500}, 100, true},
		{"caught up", pipeline.PartitionStats{Held: true, Start: 0, Committed: 1500, StableOffset: 1500}, 0, true},
		{"commit of an earlier term", pipeline.PartitionStats{Held: true, Start: 1000, Committed: 300, StableOffset: 1200}, 200, true},
		{"stable offset behind the commit (an old fetch)", pipeline.PartitionStats{Held: true, Start: 0, Committed: 60, StableOffset: 50}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := metrics.Lag(tt.s)
			if got != tt.want || ok != tt.known {
				t.Fatalf("Lag(%+v) = %d, %v; want %d, %v", tt.s, got, ok, tt.want, tt.known)
			}
		})
	}
}

// TestCollector: each series per partition with its value and labels, the
// constant labels on every series, and nothing for a pipeline that holds no
// partition.
func TestCollector(t *testing.T) {
	two := func() []pipeline.PartitionStats {
		return []pipeline.PartitionStats{
			{Partition: checkpoint.Partition{Topic: "orders", Partition: 0}, Epoch: 3, Held: true, Attempts: 40,
				Applied: 33, Suppressed: 7, DeadLettered: 2, DeadLetterReplays: 1, Start: 20, Landed: 40, Committed: 30, Fenced: 1,
				StableOffset: 45, CommitFailures: 2, TermFenced: true,
				InFlight: 5, Retrying: 2, EffectsGivenUp: 4},
			{Partition: checkpoint.Partition{Topic: "orders", Partition: 1}, Epoch: 3, Start: -1, Landed: -1, Committed: -1, StableOffset: -1},
		}
	}
	tests := []struct {
		name   string
		stats  func() []pipeline.PartitionStats
		opts   []metrics.Opt
		want   []string // series lines that must be there
		series int      // series of all metrics
	}{
		{"counters and gauges", two, nil, []string{
			`counter shardpipe_records_attempted_total{partition="0",topic="orders"} 40`,
			`counter shardpipe_effects_applied_total{partition="0",topic="orders"} 33`,
			`counter shardpipe_effects_applied_total{partition="1",topic="orders"} 0`,
			`counter shardpipe_effects_suppressed_total{partition="0",topic="orders"} 7`,
			`counter shardpipe_records_dead_lettered_total{partition="0",topic="orders"} 2`,
			`counter shardpipe_dead_letter_replays_total{partition="0",topic="orders"} 1`,
			`counter shardpipe_commits_fenced_total{partition="0",topic="orders"} 1`,
			`gauge shardpipe_landed_offset{partition="1",topic="orders"} -1`,
			`gauge shardpipe_committed_offset{partition="0",topic="orders"} 30`,
			`gauge shardpipe_uncommitted_records{partition="0",topic="orders"} 10`,
			`gauge shardpipe_uncommitted_records{partition="1",topic="orders"} 0`,
			`gauge shardpipe_partition_epoch{partition="0",topic="orders"} 3`,
			`gauge shardpipe_partition_held{partition="0",topic="orders"} 1`,
			`gauge shardpipe_partition_held{partition="1",topic="orders"} 0`,
			`gauge shardpipe_stable_offset{partition="0",topic="orders"} 45`,
			`gauge shardpipe_lag_records{partition="0",topic="orders"} 15`,
			`gauge shardpipe_commit_failures{partition="0",topic="orders"} 2`,
			`gauge shardpipe_partition_fenced{partition="0",topic="orders"} 1`,
			`gauge shardpipe_partition_fenced{partition="1",topic="orders"} 0`,
			`gauge shardpipe_effects_in_flight{partition="0",topic="orders"} 5`,
			`gauge shardpipe_effects_retrying{partition="0",topic="orders"} 2`,
			`counter shardpipe_effects_given_up_total{partition="0",topic="orders"} 4`,
		}, 34}, // 18 per partition, less partition 1's unknown stable offset and lag
		{"const labels", two, []metrics.Opt{metrics.ConstLabels(prometheus.Labels{"pipeline": "a"})}, []string{
			`counter shardpipe_effects_applied_total{partition="0",pipeline="a",topic="orders"} 33`,
			`gauge shardpipe_partition_held{partition="1",pipeline="a",topic="orders"} 0`,
		}, 34},
		{"no partitions", func() []pipeline.PartitionStats { return nil }, nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := gather(t, metrics.NewCollector(tt.stats, tt.opts...))
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("no series %s in:\n%s", w, strings.Join(got, "\n"))
				}
			}
			if len(got) != tt.series {
				t.Errorf("%d series, want %d", len(got), tt.series)
			}
		})
	}
}

// gather registers c on a registry of its own and returns one line per
// series: type, name{labels} value.
func gather(t *testing.T, c prometheus.Collector) []string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			v := m.GetGauge().GetValue()
			if mf.GetType() == dto.MetricType_COUNTER {
				v = m.GetCounter().GetValue()
			}
			out = append(out, fmt.Sprintf("%s %s{%s} %g", strings.ToLower(mf.GetType().String()), mf.GetName(), strings.Join(ls, ","), v))
		}
	}
	return out
}
