package pipeline

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// queue is one partition's bounded buffer between the poll loop and the
// worker. The poll loop never blocks on it (so rebalances are never held up by
// a slow worker); instead a queue above its bound asks for the partition to be
// paused, and the worker resumes it once it has drained below half.
type queue struct {
	mu     sync.Mutex
	recs   []*kgo.Record
	bound  int
	paused bool
	ready  chan struct{} // signalled (cap 1) when records arrive
}

func newQueue(bound int) *queue {
	return &queue{bound: bound, ready: make(chan struct{}, 1)}
}

// push appends records and reports whether the partition must be paused now.
func (q *queue) push(rs []*kgo.Record) (pause bool) {
	q.mu.Lock()
	q.recs = append(q.recs, rs...)
	if len(q.recs) >= q.bound && !q.paused {
		q.paused, pause = true, true
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return pause
}

// take removes up to n records and reports whether the partition must be
// resumed now.
func (q *queue) take(n int) (rs []*kgo.Record, resume bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n > len(q.recs) {
		n = len(q.recs)
	}
	rs = append([]*kgo.Record(nil), q.recs[:n]...)
	q.recs = q.recs[:copy(q.recs, q.recs[n:])]
	if q.paused && len(q.recs) < q.bound/2 {
		q.paused, resume = false, true
	}
	return rs, resume
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.recs)
}
