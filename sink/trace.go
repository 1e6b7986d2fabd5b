package sink

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// traceOf is what a claim for r stores of its span (Claim.Trace): the
// trace and span IDs of a sampled span in r.Context, "" for none.
func traceOf(r *Record) string {
	if r.Context == nil {
		return ""
	}
	sc := trace.SpanContextFromContext(r.Context)
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	return sc.TraceID().String() + "-" + sc.SpanID().String()
}

// Span returns the span that wrote c, from Trace, as a remote, sampled
// span context; false when c has none (or not one this package wrote).
func (c Claim) Span() (trace.SpanContext, bool) {
	return parseTrace(c.Trace)
}

// parseTrace reads a Claim.Trace.
func parseTrace(s string) (trace.SpanContext, bool) {
	tid, sid, ok := strings.Cut(s, "-")
	if !ok {
		return trace.SpanContext{}, false
	}
	t, err := trace.TraceIDFromHex(tid)
	if err != nil {
		return trace.SpanContext{}, false
	}
	sp, err := trace.SpanIDFromHex(sid)
	if err != nil {
		return trace.SpanContext{}, false
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: t, SpanID: sp, TraceFlags: trace.FlagsSampled, Remote: true}), true
}

// priorSpan is the span a stored claim names (its "trace" field), read
// without decoding the claim; zero when it names none.
func priorSpan(prior string) trace.SpanContext {
	i := strings.LastIndex(prior, `,"trace":"`)
	if i < 0 {
		return trace.SpanContext{}
	}
	rest := prior[i+len(`,"trace":"`):]
	end := strings.IndexByte(rest, '"')
	if end < 0 {
		return trace.SpanContext{}
	}
	sc, _ := parseTrace(rest[:end])
	return sc
}

// traced reports whether r carries a span, so that its result should name
// the span that applied its key.
func traced(r *Record) bool {
	return r.Context != nil && trace.SpanContextFromContext(r.Context).IsValid()
}

// startSpan starts the span of a Ledger round trip over batch (writes
// claims) under ctx's span, or, when ctx has none, the first traced
// record's, linking the other traced records' spans. A batch without spans
// gets a span that records nothing, at no cost.
func (l *Ledger) startSpan(ctx context.Context, batch []Record, writes int) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	var links []trace.Link
	for i := range batch {
		if !traced(&batch[i]) {
			continue
		}
		sc := trace.SpanContextFromContext(batch[i].Context)
		if !parent.SpanContext().IsValid() {
			parent = trace.SpanFromContext(batch[i].Context)
			ctx = trace.ContextWithSpan(ctx, parent)
		}
		if !sc.Equal(parent.SpanContext()) {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	if !parent.SpanContext().IsValid() {
		return ctx, parent
	}
	return parent.TracerProvider().Tracer(tracerName).Start(ctx, "shardpipe.ledger", trace.WithLinks(links...),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.Int("shardpipe.records", len(batch)),
			attribute.Int("shardpipe.claims", writes), attribute.String("db.system.name", "redis")))
}

// endSpan ends a span of startSpan, with err as its error.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// tracerName names the tracer of the sink's spans.
const tracerName = "github.com/shardpipe/shardpipe/sink"
