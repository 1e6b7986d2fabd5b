package opshttp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/metrics"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Ops is what an operator's address serves for one pipeline or replay: a
// registry with its counters and latency histograms (metrics.Timings), the
// Kafka client's (metrics.Kafka) and the Redis pool's metrics, Go and
// process collectors, and, for a group, the probes and the status page.
// Build it (Listen) before the pipeline, give the pipeline its Options,
// then Start, and Close it at the end. A nil *Ops serves nothing: each of
// its methods is a no-op.
type Ops struct {
	ln      net.Listener
	reg     *prometheus.Registry
	timings *metrics.Timings
	kafka   *metrics.Kafka
	root    atomic.Pointer[http.Handler] // what the server serves beside /metrics; nil: nothing (404)
	stop    func()                       // set once the server serves (Starting or Start)
}

// Listen binds addr (host:port; "" serves nothing and returns a nil Ops)
// before anything connects, so that a taken address is a start-up error,
// and returns the Ops to serve there for a pipeline about to be created
// on rdb (whose pool stats it exports). The error names the address.
func Listen(addr string, rdb redis.UniversalClient) (*Ops, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot listen there: %w", addr, err)
	}
	return NewOps(ln, rdb), nil
}

// NewOps returns the Ops to serve on ln for a pipeline about to be
// created on rdb (whose pool stats it exports); nil when ln is nil.
func NewOps(ln net.Listener, rdb redis.UniversalClient) *Ops {
	if ln == nil {
		return nil
	}
	o := &Ops{ln: ln, reg: prometheus.NewRegistry(), timings: metrics.NewTimings(), kafka: metrics.NewKafka()}
	o.reg.MustRegister(o.timings, metrics.NewRedisPool(rdb),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return o
}

// Options are the pipeline options that feed o (pipeline.Measure and the
// Kafka client's hook); a nil o has none, so a caller may pass them
// whether or not it serves anything. They are Opts: for New and NewReplay.
func (o *Ops) Options() []pipeline.Opt {
	if o == nil {
		return nil
	}
	return []pipeline.Opt{pipeline.Measure(o.timings), pipeline.KafkaOptions(kgo.WithHooks(o.kafka.Hook()))}
}

// Starting serves, until Start, /metrics and probes that say the process
// is starting: /readyz answers 503 with one failed check, "start", whose
// detail is detail (what it waits for), and /healthz 200 (alive). Call it
// at most once, before Start; without it nothing answers on the address
// until Start.
func (o *Ops) Starting(detail string, log *slog.Logger) {
	if o == nil {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		writeReport(w, Report{Checks: []Check{{Name: "start", Detail: detail}}})
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeReport(w, Report{OK: true, Checks: []Check{{Name: "start", OK: true, Detail: "alive, starting"}}})
	})
	var h http.Handler = mux
	o.root.Store(&h)
	o.serve(log, true)
}

// Start registers a metrics.Collector over stats and serves /metrics on
// o's listener and, when probe is not nil, its Handler (/healthz, /readyz,
// /status), until Close (metrics.ServeHandler); after Starting it takes
// the starting probes' place. Call it at most once.
func (o *Ops) Start(stats func() []pipeline.PartitionStats, probe *Probe, log *slog.Logger) {
	if o == nil {
		return
	}
	o.reg.MustRegister(metrics.NewCollector(stats))
	if probe != nil {
		h := probe.Handler()
		o.root.Store(&h)
	} else {
		o.root.Store(nil)
	}
	o.serve(log, probe != nil)
}

// serve starts the server on o's listener, once: /metrics and, with
// probes, what o.root holds at each request.
func (o *Ops) serve(log *slog.Logger, probes bool) {
	if o.stop != nil {
		return
	}
	var root http.Handler
	if probes {
		root = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h := o.root.Load(); h != nil {
				(*h).ServeHTTP(w, r)
				return
			}
			http.NotFound(w, r)
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, done := metrics.ServeHandler(ctx, o.ln, prometheus.Gatherers{o.reg, o.kafka}, root, log)
	o.stop = func() { cancel(); <-done }
}

// Close shuts the server down and waits for it (up to 2s for requests in
// progress), or, before Start, closes the listener.
func (o *Ops) Close() {
	switch {
	case o == nil:
	case o.stop != nil:
		o.stop()
	default:
		_ = o.ln.Close()
	}
}
