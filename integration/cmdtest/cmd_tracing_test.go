package cmdtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdReplayTracing: with OTEL_TRACES_EXPORTER=console the command
// traces: a replayed record produced under a trace gets a process span in
// the producer's trace, written to stderr before replay exits. Without the
// variable it writes no span.
func TestCmdReplayTracing(t *testing.T) {
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 1)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	tp := sdktrace.NewTracerProvider()
	pctx, span := tp.Tracer("test-producer").Start(ctx, "produce order")
	span.End()
	rec := &kgo.Record{Topic: topic, Key: []byte("o-1"), Value: []byte("{}")}
	propagation.TraceContext{}.Inject(pctx, kotel.NewRecordCarrier(rec))
	if err := integration.NewKafkaClient(t, brokers).ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	traceID := span.SpanContext().TraceID().String()
	for _, traced := range []bool{false, true} {
		if traced {
			t.Setenv("OTEL_TRACES_EXPORTER", "console")
		}
		id := integration.Group(t)
		rep := itest.Start(t, "replay", bin, "replay", "--brokers", strings.Join(brokers, ","), "--topic", topic,
			"--id", id, "--from", "0", "--redis", addr, "--ledger-prefix", prefix+"l:",
			"--dlq-prefix", prefix+"own:", "--on-poison", "stop", "--log-format", "json")
		if code := rep.Wait(ctx); code != 0 {
			t.Fatalf("replay exited %d:\n%s", code, rep.Output())
		}
		out := rep.Output()
		got := strings.Contains(out, `"Name":"`+topic+` process"`) && strings.Contains(out, traceID)
		if got != traced {
			t.Fatalf("OTEL_TRACES_EXPORTER=console %v: a process span in trace %s written: %v; want %v\n%s", traced, traceID, got, traced, out)
		}
	}
}
