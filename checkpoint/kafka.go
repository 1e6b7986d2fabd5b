package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka is a Store over a consumer group's committed offsets, through a
// franz-go client that consumes in that group with autocommit off.
//
// The epoch is the group generation (classic protocol) or the member epoch
// (KIP-848 consumer protocol) at which a partition was assigned. The store
// fences locally: Assign opens a partition's term, Release closes it, and a
// commit is refused with ErrStaleEpoch before it reaches the broker when the
// partition is not held or its epoch is older than the held term. This
// matters because franz-go sends a commit that waited through a rebalance with
// the new generation, and a classic broker does not check partition ownership:
// without the local fence a zombie's late commit could succeed. Commits the
// broker refuses for membership (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
// STALE_MEMBER_EPOCH, FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID) also wrap
// ErrStaleEpoch, with the broker's error beside it.
//
// A term also belongs to the group member that was assigned it. A classic
// member whose session expired can learn of it from its JoinGroup (the
// broker answers UNKNOWN_MEMBER_ID); franz-go then rejoins at once as a
// new member, without OnPartitionsLost, and sends every later commit, a
// commit of the old member's term too, with the new member's ID and
// generation, which the broker accepts although the old member's
// partitions may have been given to, and committed past by, another
// member. So a commit goes out only under the member ID its term was
// assigned to: checked as franz-go builds the request, a commit of an
// older membership's term is refused with ErrStaleEpoch (ErrMemberChanged)
// and the term is closed.
//
// Each Commit waits for a synchronous OffsetCommit (Client.CommitOffsetsSync).
// Commits of different partitions that overlap in time share one request
// (group commit): franz-go sends one synchronous commit at a time, and one
// round trip per partition would queue every worker behind all the others.
// A Commit waits for at most two round trips however many partitions keep
// committing: the request in flight when it arrived, then the one carrying
// it (whose sender hands over to the next waiting commit instead of sending
// for the others). Release waits for a commit in flight on that partition,
// so once Release returns no commit of the old term can land.
type Kafka struct {
	cl    *kgo.Client
	batch commitBatcher

	mu    sync.Mutex
	terms map[Partition]*term
}

type term struct {
	held     bool
	pos      Position   // epoch of the term; offset last committed in it (-1: none yet)
	member   string     // the group member ID the term was assigned to ("": not in a group)
	inFlight sync.Mutex // held while a commit of this partition is with the broker
}

// NewKafka returns a store that commits through cl, which must consume in a
// group with autocommit disabled.
func NewKafka(cl *kgo.Client) *Kafka {
	return &Kafka{cl: cl, batch: commitBatcher{send: kafkaSend(cl)}, terms: make(map[Partition]*term)}
}

// Assign opens p's term at epoch, for the client's group member ID now
// (call it where franz-go assigns p). Commits with an older epoch, or sent
// under another member ID, are refused from now on.
func (k *Kafka) Assign(p Partition, epoch int64) {
	member, _ := k.cl.GroupMetadata()
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.terms[p]
	if t == nil {
		t = &term{}
		k.terms[p] = t
	}
	t.held = true
	t.pos = Position{Epoch: epoch, Offset: -1}
	t.member = member
}

// Release closes p's term at epoch (revoked, lost, or its worker died): every
// later commit for p is refused with ErrStaleEpoch until the next Assign. A
// Release for an older term than the one held is ignored, so a late caller
// cannot close its successor's term. It waits for a commit of p already with
// the broker to finish.
func (k *Kafka) Release(p Partition, epoch int64) {
	k.mu.Lock()
	t := k.terms[p]
	if t != nil && t.pos.Epoch <= epoch {
		t.held = false
	}
	k.mu.Unlock()
	if t != nil {
		t.inFlight.Lock()
		//lint:ignore SA2001 the empty critical section waits for a commit in flight
		t.inFlight.Unlock()
	}
}

// Held reports p's term and whether p is held.
func (k *Kafka) Held(p Partition) (Position, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t := k.terms[p]; t != nil && t.held {
		return t.pos, true
	}
	return Position{}, false
}

// Commit commits offset for p if p is held at epoch and the offset does not go
// backwards inside the term. It waits for the broker's answer. The commit
// carries no leader epoch (-1); CommitAt gives one.
func (k *Kafka) Commit(ctx context.Context, p Partition, epoch, offset int64) error {
	return k.CommitAt(ctx, p, epoch, offset, -1)
}

// CommitAt is Commit with the leader epoch of the last record consumed
// before offset (its kgo.Record.LeaderEpoch, as Tracker.CommitLeaderEpoch
// gives it). The broker stores it with the offset, so that a consumer
// resuming from it detects a log truncated under it (KIP-320) instead of
// reading a diverged log; -1 stores none. It costs nothing extra: the epoch
// travels in the same OffsetCommit.
func (k *Kafka) CommitAt(ctx context.Context, p Partition, epoch, offset int64, leaderEpoch int32) error {
	next := Position{Epoch: epoch, Offset: offset}
	k.mu.Lock()
	t := k.terms[p]
	k.mu.Unlock()
	if t == nil {
		return &CommitError{Partition: p, Epoch: epoch, Offset: offset, Current: Position{Epoch: -1, Offset: -1},
			Err: fmt.Errorf("%w: partition not assigned here", ErrStaleEpoch)}
	}
	t.inFlight.Lock()
	defer t.inFlight.Unlock()

	k.mu.Lock()
	held, cur, member := t.held, t.pos, t.member
	k.mu.Unlock()
	if !held {
		return &CommitError{Partition: p, Epoch: epoch, Offset: offset, Current: cur,
			Err: fmt.Errorf("%w: partition revoked or lost", ErrStaleEpoch)}
	}
	if next.Epoch > cur.Epoch {
		return &CommitError{Partition: p, Epoch: epoch, Offset: offset, Current: cur,
			Err: fmt.Errorf("epoch %d is newer than the assignment's %d", epoch, cur.Epoch)}
	}
	v, err := check(p, cur, next)
	if err != nil || v == Same {
		return err
	}
	if err := k.send(ctx, p, offset, leaderEpoch, member); err != nil {
		if errors.Is(err, ErrMemberChanged) {
			// The membership the term belonged to is over: so is the
			// term, as if released.
			k.mu.Lock()
			if t.pos.Epoch == epoch && t.member == member {
				t.held = false
			}
			k.mu.Unlock()
		}
		return &CommitError{Partition: p, Epoch: epoch, Offset: offset, Current: cur, Err: err}
	}
	k.mu.Lock()
	if t.held && t.pos.Epoch == epoch && offset > t.pos.Offset {
		t.pos.Offset = offset
	}
	k.mu.Unlock()
	return nil
}

// send commits offset for p (in a request it may share with other
// partitions) under member, and maps its errors.
func (k *Kafka) send(ctx context.Context, p Partition, offset int64, leaderEpoch int32, member string) error {
	rerr := k.batch.commit(ctx, p, offset, leaderEpoch, member)
	if rerr == nil {
		return nil
	}
	if errors.Is(rerr, ErrMemberChanged) {
		return fmt.Errorf("%w: %w", ErrStaleEpoch, rerr)
	}
	if fencedByBroker(rerr) {
		return fmt.Errorf("%w: broker refused: %w", ErrStaleEpoch, rerr)
	}
	return fmt.Errorf("kafka commit: %w", rerr)
}

// fencedByBroker reports whether err is the broker saying this member no
// longer speaks for the group.
func fencedByBroker(err error) bool {
	for _, e := range []error{kerr.IllegalGeneration, kerr.UnknownMemberID, kerr.StaleMemberEpoch,
		kerr.FencedMemberEpoch, kerr.FencedInstanceID} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Load fetches p's committed offset from the group. The epoch of a Kafka
// commit is not stored by the broker, so Position.Epoch is the held term's
// epoch, or zero when p is not held here.
func (k *Kafka) Load(ctx context.Context, p Partition) (Position, error) {
	group, _ := k.cl.OptValue(kgo.ConsumerGroup).(string)
	if group == "" {
		return Position{}, fmt.Errorf("load %s: the client consumes in no group", p)
	}
	offs, err := kadm.NewClient(k.cl).FetchOffsets(ctx, group)
	if err != nil {
		return Position{}, fmt.Errorf("load %s: fetch offsets of group %q: %w", p, group, err)
	}
	var pos Position
	if held, ok := k.Held(p); ok {
		pos.Epoch = held.Epoch
	}
	if o, ok := offs.Lookup(p.Topic, p.Partition); ok {
		if o.Err != nil {
			return Position{}, fmt.Errorf("load %s: group %q: %w", p, group, o.Err)
		}
		pos.Offset = o.At
	}
	return pos, nil
}
