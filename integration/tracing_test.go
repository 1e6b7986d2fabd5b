package integration_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/internal/orders"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestTracing on the real servers, with an in-memory span recorder: a
// record produced under a trace gets a receive span that is the child of
// the producer's span and a process span under it; the ledger's round
// trip and its Redis commands (redisotel) are child spans; the claim
// stores the process span's IDs; and a replay of the record, suppressed by
// that claim, gets a process span linked to the one that applied it.
func TestTracing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	spans := newSpanWatch()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	e := itest.NewReplayEnv(t, "", 1)
	if err := redisotel.InstrumentTracing(e.Rdb, redisotel.WithTracerProvider(tp)); err != nil {
		t.Fatal(err)
	}

	pctx, prod := tp.Tracer("test-producer").Start(ctx, "produce order")
	rec := &kgo.Record{Topic: e.Topic, Key: []byte("o-1"),
		Value: orders.Order{OrderID: "o-1", Customer: "c1", AmountCents: 100}.JSON()}
	propagation.TraceContext{}.Inject(pctx, kotel.NewRecordCarrier(rec))
	prod.End()
	cl := integration.NewKafkaClient(t, e.Brokers)
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}

	ledger, err := sink.NewLedger(e.Rdb, sink.WithPrefix(e.Ledger()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Brokers(e.Brokers...), pipeline.Topics(e.Topic), pipeline.Group(integration.Group(t)),
		pipeline.Sink(ledger), pipeline.Tracer(tp))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	applied := spans.wait(ctx, t, "the record's process span, applied", func(s sdktrace.ReadOnlySpan) bool {
		return s.Name() == e.Topic+" process" && attr(s, "shardpipe.outcome") == "applied"
	})
	_ = p.Close(ctx)
	<-done

	receive := spans.wait(ctx, t, "the record's receive span", func(s sdktrace.ReadOnlySpan) bool {
		return s.Name() == e.Topic+" receive" && s.SpanContext().TraceID() == prod.SpanContext().TraceID()
	})
	if receive.Parent().SpanID() != prod.SpanContext().SpanID() {
		t.Fatalf("receive span's parent %v, want the producer's span %v", receive.Parent(), prod.SpanContext())
	}
	if applied.Parent().SpanID() != receive.SpanContext().SpanID() || applied.SpanContext().TraceID() != prod.SpanContext().TraceID() {
		t.Fatalf("process span %v under %v; want under the receive span %v in the producer's trace", applied.SpanContext(), applied.Parent(), receive.SpanContext())
	}
	ledgerSpan := spans.wait(ctx, t, "the ledger round trip under the process span", func(s sdktrace.ReadOnlySpan) bool {
		return s.Name() == "shardpipe.ledger" && s.Parent().SpanID() == applied.SpanContext().SpanID()
	})
	script := spans.wait(ctx, t, "the batch claim script's Redis span (redisotel) under the ledger's", func(s sdktrace.ReadOnlySpan) bool {
		return s.Parent().SpanID() == ledgerSpan.SpanContext().SpanID() && strings.Contains(strings.ToLower(s.Name()), "evalsha")
	})
	if stmt := attr(script, "db.statement"); !strings.Contains(stmt, e.Ledger()+"o-1") {
		t.Errorf("the script span's statement %.200q does not name the ledger key %q", stmt, e.Ledger()+"o-1")
	}
	claim, ok, err := ledger.Lookup(ctx, "o-1")
	if err != nil || !ok {
		t.Fatalf("claim of o-1: %v, %v", ok, err)
	}
	if sc, ok := claim.Span(); !ok || sc.TraceID() != applied.SpanContext().TraceID() || sc.SpanID() != applied.SpanContext().SpanID() {
		t.Fatalf("claim %+v names span %v, want the applying process span %v", claim, sc, applied.SpanContext())
	}

	_, ranges := e.WholeTopic(ctx)
	r, err := pipeline.NewReplay("trace", e.Topic, ranges, e.Rdb, pipeline.Brokers(e.Brokers...), pipeline.Sink(ledger),
		pipeline.CheckpointPrefix(e.Prefix+"replay:"), pipeline.Tracer(tp))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx); err != nil {
		t.Fatalf("replay: %v", err)
	}
	dup := spans.wait(ctx, t, "the replayed record's process span, suppressed", func(s sdktrace.ReadOnlySpan) bool {
		return s.Name() == e.Topic+" process" && attr(s, "shardpipe.outcome") == "suppressed"
	})
	var linked bool
	for _, l := range dup.Links() {
		linked = linked || (l.SpanContext.TraceID() == applied.SpanContext().TraceID() && l.SpanContext.SpanID() == applied.SpanContext().SpanID())
	}
	if !linked {
		t.Fatalf("suppressed span %v links %v; want a link to the applying span %v", dup.SpanContext(), dup.Links(), applied.SpanContext())
	}
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if kv.Key == attribute.Key(key) {
			return kv.Value.AsString()
		}
	}
	return ""
}

// spanWatch is an in-memory span recorder (tracetest) that wakes waiters
// when a span ends.
type spanWatch struct {
	*tracetest.SpanRecorder
	mu   sync.Mutex
	wake chan struct{}
}

func newSpanWatch() *spanWatch {
	return &spanWatch{SpanRecorder: tracetest.NewSpanRecorder(), wake: make(chan struct{})}
}

func (w *spanWatch) OnEnd(s sdktrace.ReadOnlySpan) {
	w.SpanRecorder.OnEnd(s)
	w.mu.Lock()
	close(w.wake)
	w.wake = make(chan struct{})
	w.mu.Unlock()
}

// wait returns the first ended span that match accepts, waiting for one
// to end until ctx ends.
func (w *spanWatch) wait(ctx context.Context, t *testing.T, what string, match func(sdktrace.ReadOnlySpan) bool) sdktrace.ReadOnlySpan {
	t.Helper()
	for {
		w.mu.Lock()
		wake := w.wake
		w.mu.Unlock()
		for _, s := range w.Ended() {
			if match(s) {
				return s
			}
		}
		select {
		case <-wake:
		case <-ctx.Done():
			var names []string
			for _, s := range w.Ended() {
				names = append(names, s.Name()+" "+s.SpanContext().SpanID().String()+" parent "+s.Parent().SpanID().String())
			}
			t.Fatalf("no %s among the ended spans:\n%s", what, strings.Join(names, "\n"))
		}
	}
}
