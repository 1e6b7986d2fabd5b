package integration_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestDeadLetterRefused runs on the real broker and Redis: a dead-letter
// write the broker refuses for good stops the pipeline with ErrDeadLetter
// wrapping the broker's error, naming the partition and offset, instead of
// retrying forever; the group's committed offset is the poison record's, so
// it is replayed, not dropped. Refused: a record larger than the topic's
// max.message.bytes whose placeholder is larger too (a larger record alone
// is replaced by its placeholder: TestCmdDeadLetterLargeKey), and a record
// without a key on a compacted topic.
func TestDeadLetterRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, config, value, limit string
		cause                      error
	}{
		{"placeholder larger than max.message.bytes too", "max.message.bytes", incompressible(8192), "128", kerr.MessageTooLarge},
		{"no key on a compacted topic", "cleanup.policy", "{}", "compact", kerr.InvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			deadLetterRefused(t, tc.config, tc.limit, tc.value, tc.cause)
		})
	}
}

func deadLetterRefused(t *testing.T, config, limit, value string, cause error) {
	const poison = 3
	brokers, rdb := integration.Kafka(t), integration.NewRedisClient(t, integration.Redis(t))
	topic := integration.CreateTopic(t, brokers, 1)
	dlq := configuredDeadLetterTopic(t, brokers, topic, config, limit)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	produceWithPoison(ctx, t, brokers, topic, poison, value)
	prefix := integration.RedisPrefix(t, rdb)
	ledger, err := sink.NewLedger(rdb, sink.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	log := watch.New()
	p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(integration.Group(t)),
		pipeline.Sink(ledger), pipeline.CommitEvery(100), pipeline.PoisonAttempts(1), pipeline.Observe(log.Observer("p")),
		pipeline.DeadLetters(rdb, prefix))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Run(ctx) // before the fix: retried until ctx ended, then nil
	if ctx.Err() != nil || !errors.Is(err, pipeline.ErrDeadLetter) || !errors.Is(err, cause) {
		t.Fatalf("Run = %v (ctx %v), want ErrDeadLetter wrapping %v well before the deadline", err, ctx.Err(), cause)
	}
	if want := fmt.Sprintf("%s/0 epoch 1 offset %d", topic, poison); !strings.Contains(err.Error(), want) {
		t.Fatalf("Run = %v, want it to name %q", err, want)
	}
	if c := watch.Committed(log.Events(), "")[checkpoint.Partition{Topic: topic}]; c != poison {
		t.Fatalf("committed %d, want %d (just before the poison record)", c, poison)
	}
	if n := endOffset(ctx, t, brokers, dlq); n != 0 {
		t.Fatalf("%s holds %d records, want none", dlq, n)
	}
	t.Logf("stopped: %v", err)
}

// TestDeadLetterScanPastControlRecord runs on the real broker and Redis: a
// transactional producer wrote (and committed) to the dead-letter topic, so
// its last offset is a commit marker, a control record no consumer is handed
// by default. A consumer replaying a poison record behind a lapsed marker
// scans that partition; the scan must end there (not wait for a record at
// the end offset that never comes), find no copy and write the dead letter.
func TestDeadLetterScanPastControlRecord(t *testing.T) {
	t.Parallel()
	brokers, rdb := integration.Kafka(t), integration.NewRedisClient(t, integration.Redis(t))
	topic := integration.CreateTopic(t, brokers, 1)
	dlq := integration.CreateDeadLetterTopic(t, brokers, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	produceWithPoison(ctx, t, brokers, topic, 0, "{}")
	prefix := integration.RedisPrefix(t, rdb)
	now := time.Now().UTC()
	lapsed := fmt.Sprintf(`{"state":"pending","owner":"dead/1","at":%q,"until":%q}`,
		now.Add(-time.Second).Format(time.RFC3339Nano), now.Add(-time.Millisecond).Format(time.RFC3339Nano))
	if err := rdb.Set(ctx, prefix+"dlq:"+topic+":0:0", lapsed, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	txn := integration.NewKafkaClient(t, brokers, kgo.TransactionalID(integration.Group(t)), kgo.DefaultProduceTopic(dlq))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	other := &kgo.Record{Value: []byte("{}"), Headers: []kgo.RecordHeader{
		{Key: pipeline.HeaderSourceTopic, Value: []byte("elsewhere")}, {Key: pipeline.HeaderSourcePartition, Value: []byte("0")},
		{Key: pipeline.HeaderSourceOffset, Value: []byte("0")}}}
	if err := txn.ProduceSync(ctx, other).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// The coordinator writes the commit marker after EndTransaction returns.
	for n := endOffset(ctx, t, brokers, dlq); n != 2; n = endOffset(ctx, t, brokers, dlq) {
		select {
		case <-ctx.Done():
			t.Fatalf("%s ends at %d, want 2 (a record and its commit marker)", dlq, n)
		case <-time.After(20 * time.Millisecond): // poll interval
		}
	}
	ledger, err := sink.NewLedger(rdb, sink.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	log := watch.New()
	p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(integration.Group(t)),
		pipeline.Sink(ledger), pipeline.CommitEvery(1), pipeline.PoisonAttempts(1), pipeline.Observe(log.Observer("p")),
		pipeline.DeadLetters(rdb, prefix))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second) // the scan's own bound is a minute
	defer wcancel()
	if err := log.Wait(wctx, "commit past the poison record", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "")[checkpoint.Partition{Topic: topic}] == 5
	}); err != nil {
		p.Abort()
		t.Fatalf("%v: the scan of %s hangs on its commit marker", err, dlq)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := p.Stats()[0]; s.DeadLettered != 1 || s.DeadLetterReplays != 0 {
		t.Fatalf("stats %+v, want 1 dead-lettered, no replay", s)
	}
	if n := endOffset(ctx, t, brokers, dlq); n != 3 {
		t.Fatalf("%s ends at %d, want 3 (the transaction's record, its marker, the dead letter)", dlq, n)
	}
	if v, err := rdb.Get(ctx, prefix+"dlq:"+topic+":0:0").Result(); err != nil || !strings.Contains(v, `"state":"done"`) {
		t.Fatalf("marker = %q (%v), want done", v, err)
	}
}

// configuredDeadLetterTopic creates topic's dead-letter topic, one
// partition, with config set to value.
func configuredDeadLetterTopic(t *testing.T, brokers []string, topic, config, value string) string {
	t.Helper()
	dlq := integration.CreateDeadLetterTopic(t, brokers, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resps, err := integration.NewAdmin(t, brokers).AlterTopicConfigs(ctx,
		[]kadm.AlterConfig{{Op: kadm.SetConfig, Name: config, Value: &value}}, dlq)
	if err == nil {
		_, err = resps.On(dlq, nil)
	}
	if err != nil {
		t.Fatalf("%s of %s: %v", config, dlq, err)
	}
	return dlq
}

// produceWithPoison writes 5 orders to partition 0 of topic, the one at
// offset poison without a key and with value.
func produceWithPoison(ctx context.Context, t *testing.T, brokers []string, topic string, poison int, value string) {
	t.Helper()
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	for i := range 5 {
		r := &kgo.Record{Key: fmt.Appendf(nil, "order-%d", i), Value: []byte("{}")}
		if i == poison {
			r.Key, r.Value = nil, []byte(value)
		}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// endOffset returns the end offset of topic's partition 0.
func endOffset(ctx context.Context, t *testing.T, brokers []string, topic string) int64 {
	t.Helper()
	ends, err := integration.NewAdmin(t, brokers).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	if end.Err != nil {
		t.Fatal(end.Err)
	}
	return end.Offset
}

// incompressible returns n random letters (seeded: the same every run): the
// producer compresses, so repeated bytes would fit a small limit.
func incompressible(n int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}
