package metrics

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"
)

// Kafka holds the Kafka client's metrics, from franz-go's plugin/kprom,
// named shardpipe_kafka_*: connections, bytes, errors and requests per
// broker, fetched and produced bytes and records per broker and topic,
// buffered records. Pass Hook to the pipeline
// (pipeline.KafkaOptions(kgo.WithHooks(k.Hook()))) and serve Kafka as a
// prometheus.Gatherer next to the registry of the other collectors
// (prometheus.Gatherers). The cost is franz-go's: a few counter updates per
// request.
type Kafka struct {
	reg  *prometheus.Registry
	hook *firstClient
}

// NewKafka returns an empty Kafka; its series appear once the hooked client
// is built.
func NewKafka() *Kafka {
	reg := prometheus.NewRegistry()
	m := kprom.NewMetrics("shardpipe", kprom.Subsystem("kafka"), kprom.Registry(reg),
		kprom.FetchAndProduceDetail(kprom.ByNode, kprom.ByTopic, kprom.Records, kprom.UncompressedBytes, kprom.ConsistentNaming))
	return &Kafka{reg: reg, hook: &firstClient{Metrics: m}}
}

// Hook returns the franz-go hooks that fill the metrics. The pipeline
// builds more than one client from its Kafka options (the dead-letter
// writer has its own): the metrics are registered by the first client
// built, the consumer, and unregistered when it closes; the others'
// traffic is counted in the same series.
func (k *Kafka) Hook() kgo.Hook { return k.hook }

// Gather implements prometheus.Gatherer. kprom names two gauges with a
// _total suffix (shardpipe_kafka_buffered_{fetch,produce}_records_total),
// which Prometheus reserves for counters: Gather drops the suffix of any
// gauge, so the output passes promtool check metrics.
func (k *Kafka) Gather() ([]*dto.MetricFamily, error) {
	fams, err := k.reg.Gather()
	for _, f := range fams {
		if f.GetType() == dto.MetricType_GAUGE {
			if n, ok := strings.CutSuffix(f.GetName(), "_total"); ok {
				f.Name = &n
			}
		}
	}
	return fams, err
}

// firstClient is a kprom.Metrics that only the first client it hooks
// registers and unregisters.
type firstClient struct {
	*kprom.Metrics
	mu    sync.Mutex
	first *kgo.Client
}

// OnNewClient registers the metrics for the first client only.
func (f *firstClient) OnNewClient(cl *kgo.Client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.first == nil {
		f.first = cl
		f.Metrics.OnNewClient(cl)
	}
}

// OnClientClosed unregisters the metrics when the first client closes.
func (f *firstClient) OnClientClosed(cl *kgo.Client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.first == cl {
		f.Metrics.OnClientClosed(cl)
	}
}
