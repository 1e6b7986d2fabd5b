package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// redisTerms is a replay's checkpoint store as its workers see it: commits go
// to checkpoint.Redis under the epoch the replay acquired, and the terms held
// are kept here. A commit Redis refuses as stale means a newer replay of the
// same id acquired the partition: the term is released at once (so the
// worker stops) and the replay fails with the refusal, which wraps
// checkpoint.ErrStaleEpoch.
type redisTerms struct {
	store  *checkpoint.Redis
	id     string
	onLost func(error)

	mu   sync.Mutex
	held map[checkpoint.Partition]int64 // epoch of each held term
}

func (t *redisTerms) assign(p checkpoint.Partition, epoch int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.held[p] = epoch
}

// CommitAt commits to the Redis store; the leader epoch is not kept there.
func (t *redisTerms) CommitAt(ctx context.Context, p checkpoint.Partition, epoch, offset int64, _ int32) error {
	if e, ok := t.Held(p); !ok || e.Epoch != epoch {
		return &checkpoint.CommitError{Partition: p, Epoch: epoch, Offset: offset, Current: e,
			Err: fmt.Errorf("%w: the replay's term is over", checkpoint.ErrStaleEpoch)}
	}
	err := t.store.Commit(ctx, p, epoch, offset)
	if errors.Is(err, checkpoint.ErrStaleEpoch) {
		t.Release(p, epoch)
		t.onLost(fmt.Errorf("replay %q: a newer replay of the same id took over %s: %w", t.id, p, err))
	}
	return err
}

func (t *redisTerms) Held(p checkpoint.Partition) (checkpoint.Position, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.held[p]
	return checkpoint.Position{Epoch: e, Offset: -1}, ok
}

func (t *redisTerms) Release(p checkpoint.Partition, epoch int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.held[p]; ok && e <= epoch {
		delete(t.held, p)
	}
}
