package sink

import "strconv"

// Outcome says what happened to one record's effect.
type Outcome uint8

const (
	// Applied means this record's claim was written on its behalf and its
	// effect landed: by this call, or by an earlier call for the same
	// topic, partition, offset and epoch whose reply was lost.
	Applied Outcome = iota + 1
	// Suppressed means the business key was already claimed for another
	// record (an earlier offset, another epoch, an earlier record in the
	// same batch): the effect was not performed again.
	Suppressed
)

// String returns "applied" or "suppressed".
func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Suppressed:
		return "suppressed"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Result is the fate of one record of a batch, at the same index.
type Result struct {
	// Key is the business key, empty when it could not be extracted.
	Key string
	// Outcome is Applied or Suppressed; meaningless when Err is set.
	Outcome Outcome
	// Err non-nil means this record's effect did NOT happen and nothing was
	// claimed for it (ErrNoKey, ErrBadValue, ErrCrossSlot, or a non-retryable
	// Redis error such as WRONGTYPE). It is for the caller's error policy.
	Err error
}
