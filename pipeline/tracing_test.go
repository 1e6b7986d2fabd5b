package pipeline_test

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestGuardedEffectSpan: a traced record's external effect runs in a
// "shardpipe.effect" span under the record's span, and the effect sees
// that span in its context (to pass the trace on); an untraced record's
// effect makes no span.
func TestGuardedEffectSpan(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	g, err := sink.NewGuard(rdb, sink.WithPrefix("t:"))
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	rctx, recordSpan := tp.Tracer("test").Start(context.Background(), "record")
	var inEffect []trace.SpanContext
	a := pipeline.Guarded(g, func(ctx context.Context, _ string, _ *sink.Record) error {
		inEffect = append(inEffect, trace.SpanContextFromContext(ctx))
		return nil
	})
	batch := []sink.Record{
		{Topic: "t", Offset: 0, Epoch: 1, Key: []byte("a"), Context: rctx},
		{Topic: "t", Offset: 1, Epoch: 1, Key: []byte("b")},
	}
	if _, err := a.Apply(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	recordSpan.End()
	var effects []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "shardpipe.effect" {
			effects = append(effects, s)
		}
	}
	if len(effects) != 1 || effects[0].Parent().SpanID() != recordSpan.SpanContext().SpanID() {
		t.Fatalf("effect spans %v; want one under the record's span %v", effects, recordSpan.SpanContext())
	}
	if len(inEffect) != 2 || !inEffect[0].Equal(effects[0].SpanContext()) || inEffect[1].IsValid() {
		t.Fatalf("effects saw spans %v; want the effect span %v, then none", inEffect, effects[0].SpanContext())
	}
}

// TestGuardedSuppressedNamesApplier: in guard mode, a traced record whose
// key another record already applied is suppressed with Result.Applier
// naming the span that applied it (stored in its claim), so its process
// span links to it, as in record mode.
func TestGuardedSuppressedNamesApplier(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	g, err := sink.NewGuard(rdb, sink.WithPrefix("t:"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	first, firstSpan := tp.Tracer("test").Start(context.Background(), "first")
	defer firstSpan.End()
	again, againSpan := tp.Tracer("test").Start(context.Background(), "again")
	defer againSpan.End()
	a := pipeline.Guarded(g, func(context.Context, string, *sink.Record) error { return nil })
	if _, err := a.Apply(t.Context(), []sink.Record{{Topic: "t", Offset: 0, Epoch: 1, Key: []byte("a"), Context: first}}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Apply(t.Context(), []sink.Record{
		{Topic: "t", Offset: 7, Epoch: 1, Key: []byte("a"), Context: again},
		{Topic: "t", Offset: 8, Epoch: 1, Key: []byte("b")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := firstSpan.SpanContext()
	if got := res[0].Applier; res[0].Outcome != sink.Suppressed || got.TraceID() != want.TraceID() || got.SpanID() != want.SpanID() {
		t.Errorf("suppressed result %+v; want Applier naming span %v", res[0], want)
	}
	if res[1].Applier.IsValid() {
		t.Errorf("untraced record's result names %v; want no applier", res[1].Applier)
	}
}
