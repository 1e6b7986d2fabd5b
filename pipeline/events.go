package pipeline

import (
	"fmt"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// EventKind names what happened to a partition.
type EventKind uint8

const (
	// Assigned: the partition was assigned at Epoch.
	Assigned EventKind = iota + 1
	// Revoked: the partition was handed back after its final commit.
	Revoked
	// Lost: the partition was lost without a commit.
	Lost
	// Committed: Offset was committed under Epoch.
	Committed
	// CommitRefused: a commit was refused (Err wraps
	// checkpoint.ErrStaleEpoch or ErrStaleOffset when fenced).
	CommitRefused
	// DeadLettered: a poison record was written to its dead-letter topic
	// (Err is the cause; Offset the source offset).
	DeadLettered
)

// String returns the kind in lower case, e.g. "commit-refused".
func (k EventKind) String() string {
	switch k {
	case Assigned:
		return "assigned"
	case Revoked:
		return "revoked"
	case Lost:
		return "lost"
	case Committed:
		return "committed"
	case CommitRefused:
		return "commit-refused"
	case DeadLettered:
		return "dead-lettered"
	}
	return fmt.Sprintf("event(%d)", k)
}

// Event is one thing that happened to a partition, for observers and tests.
type Event struct {
	Kind      EventKind            // what happened
	Partition checkpoint.Partition // to which partition
	Epoch     int64                // the epoch of the term it happened in
	Offset    int64                // Committed, CommitRefused: the commit's offset; DeadLettered: the source record's; else 0
	Err       error                // CommitRefused: why; DeadLettered: the poison record's refusal; else nil
	Time      time.Time            // when it happened (set by the pipeline when the emitter left it zero)
}
