package sink

import (
	"strconv"

	"go.opentelemetry.io/otel/trace"
)

// Outcome says what happened to one record's effect.
//
// The counting rule: a business key's effect happens once, when its claim is
// written, and the claim names the record (topic, partition, offset) and the
// term (group, epoch, member) that wrote it. The sink reports Applied to that
// term, Redelivered to any other term of the same group that meets the same
// record again (after a crash, a lost reply or a moved partition before the
// commit past it), and Suppressed to every other record with the key and to
// other groups. So within a group "the key was applied from this record" is
// Applied or Redelivered; to count each key once across terms and
// processes, count it where a commit moves past the record (as the
// pipeline's PartitionStats.Applied does), or per record: its Applied
// results, or one if it has none but a Redelivered one.
type Outcome uint8

const (
	// Applied means this record's claim was written on its behalf and its
	// effect landed: by this call, or by an earlier call for the same
	// topic, partition, offset and term whose reply was lost.
	Applied Outcome = iota + 1
	// Suppressed means the business key was already claimed for another
	// record (an earlier offset, an earlier record in the same batch): the
	// effect was not performed again.
	Suppressed
	// Redelivered means the business key was already claimed for this same
	// record (topic, partition and offset) under another term of the same
	// group (Record.Group): its effect landed from this record, under that
	// term, and was not performed again.
	Redelivered
)

// String returns "applied", "suppressed" or "redelivered".
func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Suppressed:
		return "suppressed"
	case Redelivered:
		return "redelivered"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Result is the fate of one record of a batch, at the same index.
type Result struct {
	// Key is the business key, empty when it could not be extracted.
	Key string
	// Outcome is Applied, Suppressed or Redelivered; meaningless when Err
	// is set.
	Outcome Outcome
	// Applier is the span that applied the key, for a Suppressed or
	// Redelivered record whose Record.Context holds a span and whose
	// claim names one (Claim.Trace; a record earlier in the same batch):
	// the pipeline links the record's span to it. Zero otherwise.
	Applier trace.SpanContext
	// Err non-nil means this record's effect did NOT happen and nothing was
	// claimed for it (ErrNoKey, ErrBadValue, ErrCrossSlot, or a non-retryable
	// Redis error such as WRONGTYPE). It is for the caller's error policy.
	Err error
}
