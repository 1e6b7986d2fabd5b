package checkpoint

import (
	"errors"
	"fmt"
)

var (
	// ErrStaleEpoch means a commit came from a superseded assignment: its epoch
	// is lower than the partition's current one, or the partition is no longer
	// held. The offset did not move.
	ErrStaleEpoch = errors.New("checkpoint: stale epoch")
	// ErrStaleOffset means a commit would move the offset backwards inside one
	// epoch. The offset did not move.
	ErrStaleOffset = errors.New("checkpoint: stale offset")
	// ErrMemberChanged means a Kafka commit's term was assigned to a group
	// member the client no longer is: it rejoined as a new member (a
	// classic member whose session expired, told so by its JoinGroup). The
	// commit was not sent; the term is closed. It comes wrapped with
	// ErrStaleEpoch.
	ErrMemberChanged = errors.New("checkpoint: the term's group member is gone (the client rejoined as a new member)")
)

// CommitError describes a refused or failed commit: which partition, the
// epoch and offset asked for, and the position that stood. Err is ErrStaleEpoch,
// ErrStaleOffset or the store's own error; errors.Is sees through CommitError.
type CommitError struct {
	Partition Partition // the partition whose commit was refused or failed
	Epoch     int64     // epoch the commit asked for
	Offset    int64     // offset the commit asked for
	Current   Position  // the position that stood when the commit was refused; {-1, -1} when unknown
	Err       error     // ErrStaleEpoch, ErrStaleOffset or the store's own error (Kafka's, Redis's)
}

// Error names the partition, the commit asked for and the position that stood.
func (e *CommitError) Error() string {
	return fmt.Sprintf("commit %s epoch %d offset %d (current epoch %d offset %d): %v",
		e.Partition, e.Epoch, e.Offset, e.Current.Epoch, e.Current.Offset, e.Err)
}

// Unwrap returns ErrStaleEpoch, ErrStaleOffset or the store's error.
func (e *CommitError) Unwrap() error { return e.Err }
