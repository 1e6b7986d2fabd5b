package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/sink"
)

// write produces the dead-letter record, bounded to end within the lease.
// One the topic refuses as too large (tooLarge) is replaced by its
// placeholder, within the same bound: placed reports that the placeholder
// landed. An error is the dead letter's, or, when it was too large, the
// placeholder's (naming the first refusal).
func (d *deadLetters) write(ctx context.Context, m mark, topic string, part int32, r *sink.Record, cause error, attempts int) (placed bool, err error) {
	deadline := m.At.Add(time.Duration(float64(m.Until.Sub(m.At)) * 0.8))
	if time.Until(deadline) <= 0 {
		return false, fmt.Errorf("dead-letter %s/%d@%d: lease ran out before the write", r.Topic, r.Partition, r.Offset)
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	rec := &kgo.Record{Topic: topic, Partition: part, Key: r.Key, Value: r.Value, Timestamp: time.Now()}
	rec.Headers = make([]kgo.RecordHeader, 0, len(r.Headers)+5)
	for _, h := range r.Headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	rec.Headers = append(rec.Headers, deadLetterHeaders(r, cause, attempts)...)
	err = d.cl.ProduceSync(wctx, rec).FirstErr()
	if err == nil {
		return false, nil
	}
	err = fmt.Errorf("dead-letter %s/%d@%d to %s/%d: %w", r.Topic, r.Partition, r.Offset, topic, part, err)
	if !tooLarge(err) {
		return false, err
	}
	if perr := d.cl.ProduceSync(wctx, placeholder(topic, part, r, cause, attempts, err)).FirstErr(); perr != nil {
		// The placeholder's error decides what happens next (judgeDLQ):
		// the first refusal is only named.
		return false, fmt.Errorf("%s; its placeholder to %s/%d: %w", err, topic, part, perr)
	}
	return true, nil
}

// deadLetterHeaders are the headers every dead-letter record ends with.
func deadLetterHeaders(r *sink.Record, cause error, attempts int) []kgo.RecordHeader {
	return []kgo.RecordHeader{
		{Key: HeaderError, Value: []byte(errorText(cause))},
		{Key: HeaderSourceTopic, Value: []byte(r.Topic)},
		{Key: HeaderSourcePartition, Value: []byte(strconv.Itoa(int(r.Partition)))},
		{Key: HeaderSourceOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
		{Key: HeaderAttempts, Value: []byte(strconv.Itoa(attempts))}}
}

// partitions returns topic's partition count, cached.
func (d *deadLetters) partitions(ctx context.Context, topic string) (int32, error) {
	d.mu.Lock()
	n := d.parts[topic]
	d.mu.Unlock()
	if n > 0 {
		return n, nil
	}
	md, err := kadm.NewClient(d.cl).Metadata(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("dead-letter topic %s: metadata: %w", topic, err)
	}
	td, ok := md.Topics[topic]
	switch {
	case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) || (td.Err == nil && len(td.Partitions) == 0):
		return 0, fmt.Errorf("dead-letter topic %s: %w", topic, errNoTopic)
	case td.Err != nil: // an authorization failure stops the pipeline, others are retried
		return 0, fmt.Errorf("dead-letter topic %s: metadata: %w", topic, td.Err)
	}
	n = int32(len(td.Partitions))
	d.mu.Lock()
	d.parts[topic] = n
	d.mu.Unlock()
	return n, nil
}
