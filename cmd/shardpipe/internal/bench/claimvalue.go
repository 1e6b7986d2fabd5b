package bench

import (
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// claimValue is the value the sink ceiling (b) and the naive consumer (c)
// write per key: a ledger claim as the pipeline (d) of the same round writes
// it for the topic's last records (the same topic, group and member ID
// shapes, offsets of as many digits), so that a ceiling key costs Redis what
// a ledger key does. The bench's claims are about 235 bytes; a value shorter
// than the claim would make the ceiling cheaper per key than the work it
// bounds.
func claimValue(spec Spec) string {
	return sink.Claim{Topic: spec.Topic, Partition: ceilingStreams - 1, Offset: int64(spec.Records / ceilingStreams),
		Epoch: 1, Member: kgoMember(), Group: roundGroup(spec, Shardpipe), At: time.Now().UTC(),
		State: sink.ClaimApplied}.Encode()
}

// roundGroup is the consumer group mode m runs in, in spec's round (Run
// names a round's groups after the round and the mode).
func roundGroup(spec Spec, m Mode) string {
	return strings.TrimSuffix(spec.Group, string(spec.Mode)) + string(m)
}

// kgoMember returns a new member ID of the shape a broker gives a franz-go
// consumer in a classic group: its client ID, "kgo", a dash and a random
// UUID.
func kgoMember() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails
	u[6], u[8] = u[6]&0x0f|0x40, u[8]&0x3f|0x80
	return fmt.Sprintf("kgo-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
