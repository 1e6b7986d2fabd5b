package integration_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestDeadLetterOnceAcrossCrash runs on the real broker and Redis: a consumer
// dead-letters a poison record and dies before committing its offset (the
// CrashAfter fault point, as a kill -9 would); the next consumer of the group
// replays the record. The dead-letter topic holds it exactly once, whether
// the first consumer died after marking its marker done or before (its
// marker left pending with a lapsed lease: the successor reads the
// dead-letter partition and finds the record there).
func TestDeadLetterOnceAcrossCrash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		beforeDone bool
	}{
		{"crash after marking done", false},
		{"crash before marking done", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			deadLetterOnceAcrossCrash(t, tc.beforeDone)
		})
	}
}

func deadLetterOnceAcrossCrash(t *testing.T, beforeDone bool) {
	const (
		records = 10
		poison  = 3 // offset of the record without a key
		crashAt = 6 // the first consumer dies after 6 attempted records
	)
	brokers, rdb := integration.Kafka(t), integration.NewRedisClient(t, integration.Redis(t))
	topic := integration.CreateTopic(t, brokers, 1)
	dlq := integration.CreateDeadLetterTopic(t, brokers, topic, 1)
	prefix, group := integration.RedisPrefix(t, rdb), integration.Group(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	for i := range records {
		key := fmt.Appendf(nil, "order-%d", i)
		if i == poison {
			key = nil
		}
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: key, Value: []byte(`{}`)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	ledger, err := sink.NewLedger(rdb, sink.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	newPipeline := func(log *watch.Log, extra ...pipeline.GroupOpt) *pipeline.Pipeline {
		p, err := pipeline.New(append([]pipeline.GroupOpt{pipeline.Brokers(brokers...), pipeline.Topics(topic),
			pipeline.Group(group), pipeline.Sink(ledger), pipeline.CommitEvery(100), pipeline.PoisonAttempts(2),
			pipeline.SessionTimeout(6 * time.Second), pipeline.Observe(log.Observer("p")),
			pipeline.DeadLetters(rdb, prefix)}, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	part := checkpoint.Partition{Topic: topic}

	log1 := watch.New()
	p1 := newPipeline(log1)
	go func() { _ = p1.Run(faults.WithWorker(ctx, faults.CrashAfter(topic, 0, crashAt, log1.Crashes("p")))) }()
	if err := log1.Wait(ctx, "the first consumer's crash", func(evs []watch.Tagged) bool {
		return watch.HasCrash(evs, "", part)
	}); err != nil {
		t.Fatal(err)
	}
	p1.Abort()
	if c, ok := watch.Committed(log1.Events(), "")[part]; ok {
		t.Fatalf("the first consumer committed %d before its crash; the replay would not happen", c)
	}
	if s := p1.Stats()[0]; s.DeadLettered != 1 {
		t.Fatalf("first consumer: dead-lettered %d, want 1", s.DeadLettered)
	}
	marker := fmt.Sprintf("%sdlq:%s:0:%d", prefix, topic, poison)
	if beforeDone {
		// As if it died after the write and before marking it done: its
		// marker is pending, its lease lapsed.
		pending := fmt.Sprintf(`{"state":"pending","owner":"dead/1","at":%q,"until":%q}`,
			started.UTC().Format(time.RFC3339Nano), time.Now().Add(-time.Millisecond).UTC().Format(time.RFC3339Nano))
		if err := rdb.Set(ctx, marker, pending, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}

	log2 := watch.New()
	p2 := newPipeline(log2)
	done := make(chan error, 1)
	go func() { done <- p2.Run(ctx) }()
	if err := log2.Wait(ctx, "the replay committed to the end", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "")[part] == records
	}); err != nil {
		t.Fatal(err)
	}
	if err := p2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s := p2.Stats()[0]
	// The crashed consumer committed nothing: the replaying one counts every
	// key applied as it commits past it, the crashed one's as Redelivered.
	if s.DeadLettered != 0 || s.DeadLetterReplays != 1 || s.Applied != records-1 || s.Suppressed != crashAt-1 ||
		s.Redelivered != crashAt-1 || s.Claimed != records-crashAt {
		t.Fatalf("replaying consumer: %+v; want 0 dead-lettered, 1 dead-letter replay, %d applied (%d claimed here, %d redelivered), %d suppressed",
			s, records-1, records-crashAt, crashAt-1, crashAt-1)
	}
	if v, err := rdb.Get(ctx, marker).Result(); err != nil || !strings.Contains(v, `"state":"done"`) {
		t.Fatalf("marker %s = %q (%v), want done", marker, v, err)
	}
	got := itest.ReadDLQ(ctx, t, brokers, dlq)
	if len(got) != 1 || sourceOffset(got[0]) != fmt.Sprint(poison) {
		t.Fatalf("dead-letter topic holds %d records (%v), want exactly the one from offset %d", len(got), got, poison)
	}
	t.Logf("poison record at offset %d: dead-lettered by the crashed consumer, replayed once by its successor (%d suppressed), one record in %s",
		poison, s.Suppressed, dlq)
}

func sourceOffset(r *kgo.Record) string {
	for _, h := range r.Headers {
		if h.Key == pipeline.HeaderSourceOffset {
			return string(h.Value)
		}
	}
	return ""
}
