package sink

import (
	"encoding/json"
	"fmt"
	"time"
)

// Claim states, as stored in Claim.State.
const (
	// ClaimApplied marks a Ledger entry: the record's effect landed.
	ClaimApplied = "applied"
	// ClaimPending marks a Guard claim whose effect is running, or whose
	// owner died; it lives for the lease.
	ClaimPending = "pending"
	// ClaimDone marks a Guard claim whose effect finished; it lives for the TTL.
	ClaimDone = "done"
)

// Claim is the value stored at a ledger key: who applied the business key,
// and when. It is small JSON, readable with redis-cli.
type Claim struct {
	Topic     string    `json:"topic"`            // the record's topic
	Partition int32     `json:"partition"`        // its partition
	Offset    int64     `json:"offset"`           // its offset
	Epoch     int64     `json:"epoch"`            // the epoch of the term that claimed it (Record.Epoch)
	Member    string    `json:"member,omitempty"` // the member of that term (Record.Member); omitted when empty
	Group     string    `json:"group,omitempty"`  // the group or replay pass of that term (Record.Group); omitted when empty
	At        time.Time `json:"at"`               // when it was claimed (UTC, the writer's clock); a Guard's done claim: when it was marked done
	State     string    `json:"state"`            // ClaimApplied, ClaimPending or ClaimDone
	// Trace names the span that wrote the claim, as its trace ID and span
	// ID in lower-case hex joined by '-' (49 bytes), when the record was
	// traced (Record.Context held a sampled span); omitted otherwise, and
	// in claims written before shardpipe stored it. See Claim.Span.
	Trace string `json:"trace,omitempty"`
	// Owner is the token of the Guard.Do call holding the claim; empty in
	// Ledger entries.
	Owner string `json:"owner,omitempty"`
}

// claimFor returns the claim r would write.
func claimFor(r *Record, state string, at time.Time) Claim {
	return Claim{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Epoch: r.Epoch, Member: r.Member,
		Group: r.Group, At: at.UTC(), State: state, Trace: traceOf(r)}
}

// Encode returns the stored form of c (JSON, about 120 bytes; 60 more
// with a Trace). It panics
// only if At is outside the years 0-9999, which the sink never writes.
func (c Claim) Encode() string {
	b, ok := appendClaim(make([]byte, 0, 192), c)
	if !ok {
		panic(fmt.Sprintf("sink: encode claim: year %d outside 0-9999", c.At.Year()))
	}
	return string(b)
}

// DecodeClaim parses a stored claim. A value that is not a claim (not JSON,
// or without a state) fails with an error wrapping ErrBadClaim.
func DecodeClaim(s string) (Claim, error) {
	var c Claim
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return Claim{}, fmt.Errorf("%w: %w", ErrBadClaim, err)
	}
	if c.State == "" {
		return Claim{}, fmt.Errorf("%w: no state in %.60q", ErrBadClaim, s)
	}
	return c, nil
}

// Names reports whether c was written for r itself under r's term: same
// topic, partition, offset, group, epoch and member. The sink counts such a
// claim as Applied for r (an earlier attempt of the same term landed it).
func (c Claim) Names(r *Record) bool {
	return c.SameRecord(r) && c.Epoch == r.Epoch && c.Member == r.Member
}

// SameRecord reports whether c was written for r's topic, partition and
// offset by r's group, under any term. The sink counts such a claim of
// another term as Redelivered for r, and any other claim as Suppressed.
func (c Claim) SameRecord(r *Record) bool {
	return c.Topic == r.Topic && c.Partition == r.Partition && c.Offset == r.Offset && c.Group == r.Group
}
