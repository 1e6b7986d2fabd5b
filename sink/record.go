package sink

import (
	"context"
	"fmt"
	"time"
)

// Record is one Kafka record as the sink sees it. The sink reads it and never
// keeps a reference to it after a call returns.
type Record struct {
	Topic     string // the Kafka topic
	Partition int32  // the partition of Topic
	Offset    int64  // the record's offset in Partition
	// Epoch is the fencing epoch of the assignment that processes the
	// record (the group generation or member epoch). It is stored in the
	// claim and used to recognise the caller's own earlier claim.
	Epoch int64
	// Member names who processes the record under Epoch: the consumer
	// group member ID in the pipeline. Epochs alone can repeat across
	// members (KIP-848 member epochs) and groups; member and epoch
	// together name one term. Empty is fine outside a group.
	Member string
	// Group names the pass over the log the term belongs to: the consumer
	// group in the pipeline, "replay:" + id in a replay. A record met again
	// under another term of the same group is Redelivered; under another
	// group (a replay, a second group reading the topic), Suppressed. It is
	// stored in the claim (its length in bytes per key); empty is one group.
	Group string
	// Key is the Kafka record key: the business key by default (see
	// KeySource). Nil for a record without one.
	Key []byte
	// Value is the record's value: JSON for the KeySource's json: form and
	// for Totals.
	Value []byte
	// Headers are the record's headers, in order; nil when it has none.
	Headers []Header
	// Timestamp is the record's Kafka timestamp (CreateTime or
	// LogAppendTime, as the topic sets).
	Timestamp time.Time
	// Context carries the record's trace span (pipeline.Tracer sets it);
	// nil is fine. When it holds a sampled span, the Ledger stores that
	// span's trace and span IDs in the claim (Claim.Trace, 60 bytes more
	// per key), starts its round trip's span under it, and a record that
	// a traced claim suppresses gets Result.Applier.
	Context context.Context
}

// Header is one Kafka record header.
type Header struct {
	Key   string // the header's name
	Value []byte // its value, nil for a header without one
}

// at names the record in error messages: topic/partition@offset.
func (r *Record) at() string {
	return fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset)
}
