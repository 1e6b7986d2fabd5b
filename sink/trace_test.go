package sink

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// TestClaimTrace: a claim for a record with a sampled span stores the
// span's IDs and reads them back (Claim.Span and the undecoded priorSpan);
// an unsampled or missing span and a claim written before the field
// existed store and read nothing.
func TestClaimTrace(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctxWith := func(flags trace.TraceFlags) context.Context {
		return trace.ContextWithSpanContext(context.Background(),
			trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags}))
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"sampled span", ctxWith(trace.FlagsSampled), true},
		{"unsampled span", ctxWith(0), false},
		{"no context", nil, false},
		{"context without a span", context.Background(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Record{Topic: "orders", Partition: 1, Offset: 5, Context: tt.ctx}
			enc := claimFor(&r, ClaimApplied, at).Encode()
			c, err := DecodeClaim(enc)
			if err != nil {
				t.Fatal(err)
			}
			sc, ok := c.Span()
			fast := priorSpan(enc)
			if ok != tt.want || fast.IsValid() != tt.want {
				t.Fatalf("claim %s: Span ok %v, priorSpan valid %v; want %v", enc, ok, fast.IsValid(), tt.want)
			}
			if tt.want && (sc.TraceID() != tid || sc.SpanID() != sid || !fast.Equal(sc) || len(enc) > 200) {
				t.Fatalf("claim %s (%d bytes): span %v, priorSpan %v; want trace %v span %v, at most 200 bytes", enc, len(enc), sc, fast, tid, sid)
			}
		})
	}
	old := `{"topic":"orders","partition":1,"offset":5,"epoch":0,"at":"2026-01-02T03:04:05Z","state":"applied"}`
	if c, err := DecodeClaim(old); err != nil || c.Trace != "" {
		t.Fatalf("a claim without trace: %+v, %v", c, err)
	}
	if priorSpan(old).IsValid() {
		t.Fatal("a claim without trace names a span")
	}
}
