package checkpoint

import "context"

// Store keeps committed positions. Every implementation applies Decide: a
// commit returns nil when the position advanced or already stood there, and a
// *CommitError wrapping ErrStaleEpoch or ErrStaleOffset when the rules refuse
// it, in which case nothing moved.
type Store interface {
	// Commit moves p to offset under epoch.
	Commit(ctx context.Context, p Partition, epoch, offset int64) error
	// Load returns p's committed position; the zero Position when nothing was
	// committed yet.
	Load(ctx context.Context, p Partition) (Position, error)
}
