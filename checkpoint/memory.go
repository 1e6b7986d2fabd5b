package checkpoint

import (
	"context"
	"sync"
)

// Memory is a Store held in process memory, for tests and examples. It is safe
// for concurrent use; each call takes one mutex.
type Memory struct {
	mu  sync.Mutex
	pos map[Partition]Position
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory { return &Memory{pos: make(map[Partition]Position)} }

// Commit applies Decide to p's position.
func (m *Memory) Commit(_ context.Context, p Partition, epoch, offset int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := Position{Epoch: epoch, Offset: offset}
	if _, err := check(p, m.pos[p], next); err != nil {
		return err
	}
	m.pos[p] = next
	return nil
}

// Load returns p's position, the zero Position when none was committed.
func (m *Memory) Load(_ context.Context, p Partition) (Position, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pos[p], nil
}

// Acquire starts a new term on p: the epoch is one past the stored one, so
// every holder of an older term is fenced. It returns the new position.
func (m *Memory) Acquire(_ context.Context, p Partition) (Position, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.pos[p]
	cur.Epoch++
	m.pos[p] = cur
	return cur, nil
}
