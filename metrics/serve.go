package metrics

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

	"github.com/shardpipe/shardpipe/pipeline"
)

// Serve listens on addr (host:port, or :0 for any free port) and serves a
// Collector over stats at /metrics, as ServeListener does. It returns once
// the listener is bound, so a bad or busy address fails at once, with the
// bound address and a channel closed when the server has stopped.
func Serve(ctx context.Context, addr string, stats func() []pipeline.PartitionStats, log *slog.Logger) (string, <-chan struct{}, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	a, done := ServeListener(ctx, ln, stats, log)
	return a, done, nil
}

// ServeListener serves a Collector over stats at /metrics on ln (which it
// closes), on a registry of its own, until ctx ends, as ServeHandler does.
// A command binds ln before anything else starts, so that a taken address
// is a start-up error.
func ServeListener(ctx context.Context, ln net.Listener, stats func() []pipeline.PartitionStats, log *slog.Logger) (string, <-chan struct{}) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(stats))
	return ServeHandler(ctx, ln, reg, nil, log)
}

// ServeHandler serves /metrics from g on ln (which it closes) and, when
// other is not nil, every other path from other (the probes and the status
// page of opshttp) until ctx ends, each connection within DefaultLimits; then it shuts the server down, waiting
// up to 2s for requests in progress. It returns the listener's address and
// a channel closed when the server has stopped. A server that stops by
// itself is logged on log.
func ServeHandler(ctx context.Context, ln net.Listener, g prometheus.Gatherer, other http.Handler, log *slog.Logger) (string, <-chan struct{}) {
	return ServeHandlerLimits(ctx, ln, g, other, DefaultLimits(), log)
}

// Limits bound how long one connection may hold the server: a client
// that sends its request slowly, reads the reply slowly or keeps an idle
// connection open is cut off. A zero field is no bound.
type Limits struct {
	// ReadHeader is how long a request's headers may take to arrive.
	ReadHeader time.Duration
	// Read is how long a whole request (headers and body) may take.
	Read time.Duration
	// Write is how long a reply may take, from the request's headers read.
	Write time.Duration
	// Idle is how long a kept-alive connection may wait for its next request.
	Idle time.Duration
}

// DefaultLimits are ServeHandler's: 5s for a request's headers, 10s for
// the whole request, 30s for the reply (a readiness probe's Redis write is
// bounded at 2s, a scrape by the registry's size), 60s idle.
func DefaultLimits() Limits {
	return Limits{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: 30 * time.Second, Idle: 60 * time.Second}
}

// ServeHandlerLimits is ServeHandler with lim instead of DefaultLimits.
func ServeHandlerLimits(ctx context.Context, ln net.Listener, g prometheus.Gatherer, other http.Handler, lim Limits, log *slog.Logger) (string, <-chan struct{}) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	also := ""
	if other != nil {
		mux.Handle("/", other)
		also = "/healthz /readyz /status"
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: lim.ReadHeader, ReadTimeout: lim.Read, WriteTimeout: lim.Write,
		IdleTimeout: lim.Idle}
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
	log.Info("serving Prometheus metrics", "addr", ln.Addr().String(), "path", "/metrics", "also", also)
	return ln.Addr().String(), done
}
