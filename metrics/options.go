package metrics

import "github.com/prometheus/client_golang/prometheus"

// Opt configures NewCollector, as kgo.Opt configures a franz-go client.
type Opt interface{ apply(*collectorConfig) }

type opt func(*collectorConfig)

func (o opt) apply(c *collectorConfig) { o(c) }

type collectorConfig struct {
	labels prometheus.Labels
}

// ConstLabels adds labels with fixed values to every series, to tell
// several pipelines of one process apart (a pipeline="orders" label, say).
// Default: none.
func ConstLabels(l prometheus.Labels) Opt {
	return opt(func(c *collectorConfig) { c.labels = l })
}
