package pipeline

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// queue is one partition's bounded buffer between the poll loop and the
// worker. The poll loop never blocks on it (so rebalances are never held up by
// a slow worker); instead a queue at its bound pauses the partition's fetching,
// and the worker resumes it once it has drained below half. Pause and resume
// run under the queue's lock, so their order always matches the state (both
// franz-go calls only swap a set and never block).
type queue struct {
	mu     sync.Mutex
	recs   []*kgo.Record
	bound  int
	paused bool
	pause  func()        // stop fetching the partition
	resume func()        // fetch it again
	ready  chan struct{} // signalled (cap 1) when records arrive
}

func newQueue(bound int, pause, resume func()) *queue {
	return &queue{bound: bound, pause: pause, resume: resume, ready: make(chan struct{}, 1)}
}

// push appends records, pausing the partition when the queue reaches its bound.
func (q *queue) push(rs []*kgo.Record) {
	q.mu.Lock()
	q.recs = append(q.recs, rs...)
	if len(q.recs) >= q.bound && !q.paused {
		q.paused = true
		q.pause()
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take removes up to n records, resuming the partition once the queue is below
// half its bound (an empty queue is below half of a bound of one).
func (q *queue) take(n int) []*kgo.Record {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n > len(q.recs) {
		n = len(q.recs)
	}
	rs := append([]*kgo.Record(nil), q.recs[:n]...)
	left := copy(q.recs, q.recs[n:])
	// Drop the pointers left behind the new end: a stale one would keep its
	// record, the record slice it sits in and its fetch response alive.
	clear(q.recs[left:])
	q.recs = q.recs[:left]
	if q.paused && 2*len(q.recs) < q.bound {
		q.paused = false
		q.resume()
	}
	return rs
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.recs)
}
