package pipeline

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/sink"
)

// tooLarge reports whether err refuses a dead letter for its size: larger
// than the topic's max.message.bytes or the client's batch bound
// (kerr.MessageTooLarge, which kgo also returns itself for a record over
// ProducerBatchMaxBytes), or a batch the broker takes for too large.
func tooLarge(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}

// placeholder is the record written in place of r's dead letter when the
// topic refused that as too large (refusal): no key, no value and none of
// r's headers, only the dead-letter headers (source topic, partition and
// offset, attempts, the cause) plus HeaderTooLarge, HeaderSourceKey and
// HeaderSourceValue, so that it is a few hundred bytes whatever r is. The
// source headers let the scan for an earlier write find it like a dead
// letter, and an operator fetch r from its topic by offset while the topic
// retains it. It costs a SHA-256 pass over r's key and value.
func placeholder(topic string, part int32, r *sink.Record, cause error, attempts int, refusal error) *kgo.Record {
	rec := &kgo.Record{Topic: topic, Partition: part, Timestamp: time.Now()}
	rec.Headers = append(deadLetterHeaders(r, cause, attempts),
		kgo.RecordHeader{Key: HeaderTooLarge, Value: []byte(errorText(refusal))},
		kgo.RecordHeader{Key: HeaderSourceKey, Value: []byte(digest(r.Key))},
		kgo.RecordHeader{Key: HeaderSourceValue, Value: []byte(digest(r.Value))})
	return rec
}
