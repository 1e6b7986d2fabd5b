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
// over stats) until ctx ends; see serveOps.
func serveMetrics(ctx context.Context, addr string, stats func() []pipeline.PartitionStats, log *slog.Logger) (string, <-chan struct{}, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(stats))
	return serveOps(ctx, addr, reg, nil, log)
}

// serveOps listens on addr and serves /metrics from reg and, when ops is
// not nil, everything else from ops (the probes and the status page) until
// ctx ends. It returns once the listener is bound, so a bad or busy address
// fails at start, with the bound address and a channel closed when the
// server has stopped.
func serveOps(ctx context.Context, addr string, reg prometheus.Gatherer, ops http.Handler, log *slog.Logger) (string, <-chan struct{}, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if ops != nil {
		mux.Handle("/", ops)
	}
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
	log.Info("serving Prometheus metrics", "addr", ln.Addr().String(), "path", "/metrics", "also", "/healthz /readyz /status")
	return ln.Addr().String(), done, nil
}
