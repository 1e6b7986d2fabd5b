package integration_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestReplayDeadLetters replays, on the real servers, a range holding a
// poison record (no key) with DeadLetters configured: the first replay
// writes it once to the dead-letter topic and reaches its end; a second
// replay of the same range under a new id finds the done marker, writes
// nothing and reaches its end too. The dead-letter topic holds the one record.
func TestReplayDeadLetters(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := itest.NewReplayEnv(t, "", 1)
	e.Produce(ctx, 30, 0, time.Now())
	cl := integration.NewKafkaClient(t, e.Brokers, kgo.DefaultProduceTopic(e.Topic))
	poison := &kgo.Record{Value: []byte(`{"order_id":"none","customer":"c00","amount_cents":5}`)}
	if err := cl.ProduceSync(ctx, poison).FirstErr(); err != nil {
		t.Fatal(err)
	}
	e.Produce(ctx, 30, 0, time.Now())
	ledger, ranges := e.WholeTopic(ctx)
	dlq := e.Topic + ".dlq"
	tests := []struct {
		id                           string
		applied, poison, deadLetters int64
	}{
		{"first", 60, 1, 1},
		{"second", 0, 1, 0}, // the marker is done: no second write, still poison
	}
	for _, tc := range tests {
		r, err := pipeline.NewReplay(tc.id, e.Topic, ranges, e.Rdb, pipeline.Brokers(e.Brokers...),
			pipeline.Sink(ledger), pipeline.PoisonAttempts(1), pipeline.CheckpointPrefix(e.Prefix+"replay:"),
			pipeline.DeadLetters(e.Rdb, e.Ledger()))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Run(ctx); err != nil {
			t.Fatalf("replay %s: %v", tc.id, err)
		}
		p := r.Progress()[0]
		if !p.Done || p.Landed != p.To || p.To != 61 || p.Applied != tc.applied || p.Poison != tc.poison ||
			p.Poison-p.DeadLetterReplays != tc.deadLetters {
			t.Fatalf("replay %s: progress %+v, want done at 61, %d applied, %d poison of which %d dead-lettered now", tc.id, p, tc.applied, tc.poison, tc.deadLetters)
		}
		got := itest.ReadDLQ(ctx, t, e.Brokers, dlq)
		if len(got) != 1 || sourceOffset(got[0]) != fmt.Sprint(poison.Offset) {
			t.Fatalf("after replay %s: %s holds %d records, want exactly the poison one from offset %d", tc.id, dlq, len(got), poison.Offset)
		}
	}
}
