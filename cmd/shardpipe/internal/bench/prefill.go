package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/topics"
)

// ErrTopicMismatch means an existing topic does not hold the records the
// run asked for.
var ErrTopicMismatch = errors.New("bench: topic does not hold the requested records")

// Prefill makes sure topic holds exactly n bench orders in partitions
// partitions. An existing topic with n records is reused as it is; one with
// another count is an error wrapping ErrTopicMismatch unless recreate is set,
// in which case it is deleted and produced again. Producing is batched and
// idempotent and logs progress every few seconds. kafka are the clients'
// options: the seed brokers, TLS and SASL.
func Prefill(ctx context.Context, kafka []kgo.Opt, topic string, partitions int32, n int, recreate bool, log *slog.Logger) error {
	cl, err := kgo.NewClient(kafka...)
	if err != nil {
		return fmt.Errorf("bench: kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	have, exists, err := topicRecords(ctx, adm, topic)
	if err != nil {
		return err
	}
	if exists && have == int64(n) {
		log.Info("bench: reusing pre-filled topic", "topic", topic, "records", have)
		return nil
	}
	if exists && !recreate {
		return fmt.Errorf("%w: %q holds %d records, want %d (pass --records %d, or another --bench-topic)",
			ErrTopicMismatch, topic, have, n, have)
	}
	if exists {
		if _, err := adm.DeleteTopic(ctx, topic); err != nil {
			return fmt.Errorf("bench: delete topic %q: %w", topic, err)
		}
		if err := waitGone(ctx, adm, topic); err != nil {
			return err
		}
	}
	if _, err := topics.Create(ctx, adm, topics.Spec{Name: topic, Partitions: partitions}); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return produce(ctx, kafka, topic, n, log)
}

// topicRecords sums the records held by topic's partitions.
func topicRecords(ctx context.Context, adm *kadm.Client, topic string) (int64, bool, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, false, fmt.Errorf("bench: end offsets of %q: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, false, fmt.Errorf("bench: start offsets of %q: %w", topic, err)
	}
	var sum int64
	exists := false
	absent := false
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			absent = true // unknown topic or partition
			return
		}
		exists = true
		s, _ := starts.Lookup(o.Topic, o.Partition)
		sum += o.Offset - s.Offset
	})
	if absent {
		return 0, false, nil
	}
	return sum, exists, nil
}

func waitGone(ctx context.Context, adm *kadm.Client, topic string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		md, err := adm.ListTopics(ctx, topic)
		if err == nil && !md.Has(topic) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: topic %q still exists 30s after its deletion", topic)
}

// produce writes n orders, keyed by order ID, with franz-go's idempotent
// producer in large lingering batches.
func produce(ctx context.Context, kafka []kgo.Opt, topic string, n int, log *slog.Logger) error {
	cl, err := kgo.NewClient(append(slices.Clone(kafka), kgo.DefaultProduceTopic(topic),
		kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.MaxBufferedRecords(100_000))...)
	if err != nil {
		return fmt.Errorf("bench: producer: %w", err)
	}
	defer cl.Close()
	var (
		wg    sync.WaitGroup
		acked atomic.Int64
		once  sync.Once
		first error
	)
	start := time.Now()
	last := start
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		wg.Add(1)
		r := &kgo.Record{Key: []byte(Key(i)), Value: value(i, base.Add(time.Duration(i)*time.Millisecond))}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				once.Do(func() { first = err })
			}
			acked.Add(1)
			wg.Done()
		})
		if time.Since(last) > 5*time.Second {
			last = time.Now()
			log.Info("bench: pre-filling", "topic", topic, "acked", acked.Load(), "of", n)
		}
	}
	wg.Wait()
	if first != nil {
		return fmt.Errorf("bench: produce to %q: %w", topic, first)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	log.Info("bench: pre-filled", "topic", topic, "records", n, "seconds", time.Since(start).Seconds())
	return nil
}
