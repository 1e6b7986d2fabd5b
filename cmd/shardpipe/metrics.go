package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shardpipe/shardpipe/metrics"
	"github.com/shardpipe/shardpipe/pipeline"
)

// serveMetrics listens on addr and serves /metrics (a metrics.Collector
// over stats) until ctx ends. It returns
// once the listener is bound, so a bad or busy address fails at start, with
// the bound address and a channel closed when the server has stopped.
func serveMetrics(ctx context.Context, addr string, stats func() []pipeline.PartitionStats, log *slog.Logger) (string, <-chan struct{}, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	a, done := serveMetricsOn(ctx, ln, stats, log)
	return a, done, nil
}

// listenMetrics binds --metrics-addr before anything else starts: an
// address another process holds (or this host does not have) is a start-up
// problem the flag fixes, a usage error (exit 2) naming it.
func listenMetrics(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageErr(fmt.Sprintf("%s %s: cannot listen there (%v); choose a free address or leave it empty", flagRef(fMetricsAddr), addr, err))
	}
	return ln, nil
}

// serveMetricsOn is serveMetrics on a bound listener, which it closes.
func serveMetricsOn(ctx context.Context, ln net.Listener, stats func() []pipeline.PartitionStats, log *slog.Logger) (string, <-chan struct{}) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(stats))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("serving Prometheus metrics", "addr", ln.Addr().String(), "path", "/metrics")
	return ln.Addr().String(), done
}
