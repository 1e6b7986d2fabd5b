package pipeline

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/shardpipe/shardpipe/sink"
)

// traceHooks are the kotel hooks of the consuming clients (none without
// Tracer). Producing clients (dead letters) do not get them.
func (c *config) traceHooks() []kgo.Opt {
	if c.tracer == nil {
		return nil
	}
	return []kgo.Opt{kgo.WithHooks(kotel.NewKotel(kotel.WithTracer(c.tracer)).Hooks()...)}
}

// sinkRecord is r as the sink gets it, with its process span in Context
// when tracing.
func (w *worker) sinkRecord(r *kgo.Record) sink.Record {
	s := toSink(r, w.epoch, w.member, w.p.pass)
	if t := w.p.cfg.tracer; t != nil {
		ctx, span := t.WithProcessSpan(r)
		span.SetAttributes(attribute.Int64("shardpipe.epoch", w.epoch))
		s.Context = ctx
	}
	return s
}

// endSpan ends the process span of r, landed with res: its outcome, a
// link to the span that applied its key, or its error.
func endSpan(r *sink.Record, res sink.Result, outcome string) {
	if r.Context == nil {
		return
	}
	span := trace.SpanFromContext(r.Context)
	if res.Applier.IsValid() {
		span.AddLink(trace.Link{SpanContext: res.Applier, Attributes: []attribute.KeyValue{
			attribute.String("shardpipe.link", "applied by")}})
	}
	span.SetAttributes(attribute.String("shardpipe.outcome", outcome), attribute.String("shardpipe.key", res.Key))
	if res.Err != nil {
		span.RecordError(res.Err)
		span.SetStatus(codes.Error, res.Err.Error())
	}
	span.End()
}

// effectSpan starts the span of an external effect under r's span; it
// records nothing when r has none.
func effectSpan(ctx context.Context, r *sink.Record) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if r.Context != nil {
		parent = trace.SpanFromContext(r.Context)
	}
	if !parent.SpanContext().IsValid() {
		return ctx, parent
	}
	return parent.TracerProvider().Tracer("github.com/shardpipe/shardpipe/pipeline").Start(
		trace.ContextWithSpan(ctx, parent), "shardpipe.effect", trace.WithSpanKind(trace.SpanKindClient))
}

// endEffectSpan ends a span of effectSpan, with err as its error.
func endEffectSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// endSpans ends the process spans of batch, landed with results (a no-op
// without Tracer).
func (w *worker) endSpans(batch []sink.Record, results []sink.Result) {
	if w.p.cfg.tracer == nil {
		return
	}
	for i := range batch {
		outcome := results[i].Outcome.String()
		switch err := results[i].Err; {
		case errors.Is(err, ErrEffectFailed):
			outcome = "effect failed" // refused, or given up after EffectAttempts
		case err != nil:
			outcome = "poison"
		}
		endSpan(&batch[i], results[i], outcome)
	}
}
