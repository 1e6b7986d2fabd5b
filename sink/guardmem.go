package sink

import (
	"container/list"
	"fmt"
	"sync"
	"time"
)

// defaultRemember bounds how many unfinished records a Guard remembers.
const defaultRemember = 10_000

// memo is what a Guard remembers of one record under one term (topic,
// partition, offset, group, epoch, member) while its Do has not finished: the
// owner token and pending claim it wrote, and whether the effect ran. A
// retry of the record in the same term reuses them, so it recognises its own
// pending claim and, once the effect ran, only marks the claim done.
type memo struct {
	id      string
	owner   string
	pending string // the encoded pending claim, byte for byte what was sent
	ran     bool   // the effect returned nil: never run it again, only mark it done
	busy    bool   // a Do holds it
	forget  bool   // drop it when the Do returns
	elem    *list.Element
	// leaseEnd is when the pending claim's lease lapses at the earliest,
	// as far as this process knows: when the claim or its last renewal
	// was sent, plus the lease.
	leaseEnd time.Time
}

// memory holds the memos of unfinished records, at most max of them; past
// that the oldest idle one is forgotten.
type memory struct {
	mu    sync.Mutex
	max   int
	m     map[string]*memo
	order *list.List // oldest first
	// onEvict is told about a memo forgotten for room while its effect had
	// run: a retry of that record would no longer know.
	onEvict func(id string)
}

func newMemory(max int, onEvict func(string)) *memory {
	return &memory{max: max, m: make(map[string]*memo), order: list.New(), onEvict: onEvict}
}

// recordTerm names r under its term: the memory's key.
func recordTerm(r *Record) string {
	return fmt.Sprintf("%s/%d@%d g%q e%d m%q", r.Topic, r.Partition, r.Offset, r.Group, r.Epoch, r.Member)
}

// take returns r's memo, made with newMemo when there is none, and marks it
// busy. A memo already busy (a concurrent Do of the same record and term)
// is an error.
func (mm *memory) take(r *Record, newMemo func() memo) (*memo, error) {
	id := recordTerm(r)
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if m, ok := mm.m[id]; ok {
		if m.busy {
			return nil, fmt.Errorf("sink: %s: Guard.Do already running for this record and term", r.at())
		}
		m.busy = true
		return m, nil
	}
	nm := newMemo()
	m := &nm
	m.id, m.busy = id, true
	m.elem = mm.order.PushBack(m)
	mm.m[id] = m
	for e := mm.order.Front(); len(mm.m) > mm.max && e != nil; {
		old := e.Value.(*memo)
		e = e.Next()
		if old.busy {
			continue
		}
		mm.drop(old)
		if old.ran && mm.onEvict != nil {
			mm.onEvict(old.id)
		}
	}
	return m, nil
}

// takeRan returns r's memo, marked busy, when r's effect ran; nil when
// there is no memo or its effect did not run. A memo already busy is an
// error, as in take.
func (mm *memory) takeRan(r *Record) (*memo, error) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	m, ok := mm.m[recordTerm(r)]
	if !ok || !m.ran {
		return nil, nil
	}
	if m.busy {
		return nil, fmt.Errorf("sink: %s: Guard.Do already running for this record and term", r.at())
	}
	m.busy = true
	return m, nil
}

// put hands m back after a Do; a memo marked forget is dropped.
func (mm *memory) put(m *memo) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	m.busy = false
	if m.forget {
		mm.drop(m)
	}
}

func (mm *memory) drop(m *memo) {
	if cur, ok := mm.m[m.id]; ok && cur == m {
		delete(mm.m, m.id)
		mm.order.Remove(m.elem)
	}
}

// len returns how many records are remembered.
func (mm *memory) len() int {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	return len(mm.m)
}

// peek returns a copy of r's memo, if any.
func (mm *memory) peek(r *Record) (memo, bool) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	m, ok := mm.m[recordTerm(r)]
	if !ok {
		return memo{}, false
	}
	return *m, true
}
