package otelenv

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestFromEnv: tracing is off unless OTEL_TRACES_EXPORTER or an OTLP
// endpoint asks for it; a setting it cannot use is ErrConfig naming the
// variable; console writes the spans it ended.
func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		on      bool
		badName string // ErrConfig naming this
	}{
		{"nothing set: off", nil, false, ""},
		{"none", map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false, ""},
		{"disabled wins", map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, false, ""},
		{"console", map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true, ""},
		{"an endpoint alone: otlp", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, ""},
		{"otlp and console", map[string]string{"OTEL_TRACES_EXPORTER": "otlp, console"}, true, ""},
		{"unknown exporter", map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"}, false, "OTEL_TRACES_EXPORTER"},
		{"grpc refused", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, "OTEL_EXPORTER_OTLP_PROTOCOL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			tp, err := FromEnv(context.Background(), func(k string) string { return tt.env[k] }, "svc", &out)
			if tt.badName != "" {
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.badName) {
					t.Fatalf("err %v; want ErrConfig naming %s", err, tt.badName)
				}
				return
			}
			if err != nil || (tp != nil) != tt.on {
				t.Fatalf("provider %v, err %v; want on %v", tp, err, tt.on)
			}
			if tp == nil {
				return
			}
			_, span := tp.Tracer("test").Start(context.Background(), "a-span")
			span.End()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // nothing listens on the OTLP endpoint
			defer cancel()
			_ = tp.Shutdown(ctx)
			if strings.Contains(tt.env["OTEL_TRACES_EXPORTER"], "console") && !strings.Contains(out.String(), `"a-span"`) {
				t.Fatalf("console wrote %q, want the span", out.String())
			}
		})
	}
}
