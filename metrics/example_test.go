package metrics_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/metrics"
	"github.com/shardpipe/shardpipe/pipeline"
)

// A Collector over a pipeline's stats, registered on a registry that an
// HTTP handler (promhttp.HandlerFor) serves. Here the stats are a snapshot;
// in a program they are (*pipeline.Pipeline).Stats.
func Example() {
	stats := func() []pipeline.PartitionStats {
		return []pipeline.PartitionStats{{Partition: checkpoint.Partition{Topic: "orders", Partition: 0},
			Held: true, Start: 0, Landed: 40, Committed: 30}}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(stats))
	mfs, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "shardpipe_uncommitted_records" {
			fmt.Println(mf.GetName(), mf.GetMetric()[0].GetGauge().GetValue())
		}
	}
	// Output: shardpipe_uncommitted_records 10
}
