// Package otelenv builds the command's OpenTelemetry tracer provider from
// the standard OTEL_* environment variables. Tracing is off unless they
// ask for it.
package otelenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"

	"github.com/shardpipe/shardpipe/pipeline"
)

// ErrConfig is what a setting FromEnv cannot use wraps (exit 2 in the
// command); the error names the variable.
var ErrConfig = errors.New("otelenv: bad setting")

// Tracing is the command's tracing: a tracer provider, or nothing (a nil
// *Tracing) when tracing is off.
type Tracing struct{ tp *sdktrace.TracerProvider }

// Start builds the Tracing the environment configures (FromEnv) and, when
// on, traces rdb's commands with it (go-redis's redisotel). nil when off.
func Start(ctx context.Context, getenv func(string) string, console io.Writer, rdb redis.UniversalClient) (*Tracing, error) {
	tp, err := FromEnv(ctx, getenv, "shardpipe", console)
	if err != nil || tp == nil {
		return nil, err
	}
	if err := redisotel.InstrumentTracing(rdb, redisotel.WithTracerProvider(tp)); err != nil {
		_ = tp.Shutdown(ctx)
		return nil, fmt.Errorf("otelenv: trace redis: %w", err)
	}
	return &Tracing{tp: tp}, nil
}

// Options is pipeline.Tracer with the provider; none when t is nil.
func (t *Tracing) Options() []pipeline.Opt {
	if t == nil {
		return nil
	}
	return []pipeline.Opt{pipeline.Tracer(t.tp)}
}

// Close flushes the spans still batched (for up to five seconds) and stops
// the exporters; a nil t does nothing.
func (t *Tracing) Close() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.tp.Shutdown(ctx)
}

// FromEnv returns the tracer provider the environment (getenv) configures,
// or nil when tracing is off: OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER
// none, or neither it nor an OTLP endpoint set (shardpipe traces only when
// asked, unlike the SDK default of otlp). OTEL_TRACES_EXPORTER is a
// comma-separated list of otlp (OTLP over HTTP/protobuf: the exporter
// reads OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT and their _TRACES_
// forms; OTEL_EXPORTER_OTLP_PROTOCOL grpc is refused) and console (JSON
// spans on console). The SDK reads OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_*,
// the resource OTEL_SERVICE_NAME (default service) and
// OTEL_RESOURCE_ATTRIBUTES. Call Shutdown on the provider at exit: it
// flushes the spans still batched.
func FromEnv(ctx context.Context, getenv func(string) string, service string, console io.Writer) (*sdktrace.TracerProvider, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	list := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	if list == "" && (getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") {
		list = "otlp"
	}
	var opts []sdktrace.TracerProviderOption
	for _, name := range strings.Split(list, ",") {
		switch name = strings.TrimSpace(name); name {
		case "", "none":
		case "otlp":
			proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
			if proto == "" {
				proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
			}
			if proto != "" && proto != "http/protobuf" {
				return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_PROTOCOL %q: shardpipe exports OTLP over http/protobuf only (a collector's port 4318)", ErrConfig, proto)
			}
			exp, err := otlptracehttp.New(ctx)
			if err != nil {
				return nil, fmt.Errorf("%w: OTLP exporter: %w", ErrConfig, err)
			}
			opts = append(opts, sdktrace.WithBatcher(exp))
		case "console":
			exp, err := stdouttrace.New(stdouttrace.WithWriter(console))
			if err != nil {
				return nil, fmt.Errorf("%w: console exporter: %w", ErrConfig, err)
			}
			opts = append(opts, sdktrace.WithBatcher(exp))
		default:
			return nil, fmt.Errorf("%w: OTEL_TRACES_EXPORTER %q: want otlp, console or none", ErrConfig, name)
		}
	}
	if len(opts) == 0 {
		return nil, nil
	}
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(service)), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("%w: OTEL_RESOURCE_ATTRIBUTES: %w", ErrConfig, err)
	}
	return sdktrace.NewTracerProvider(append(opts, sdktrace.WithResource(res))...), nil
}
