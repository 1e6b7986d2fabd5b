package pipeline

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// queue is one partition's bounded buffer between the poll loop and the
// worker. The poll loop never blocks on it (so rebalances are never held up by
// a slow worker); instead a queue at either of its bounds, in records or in
// bytes (recordBytes), pauses the partition's fetching, and the worker
// resumes it once it has drained below half of both. Pause and resume run
// under the queue's lock, so their order always matches the state (both
// franz-go calls only swap a set and never block).
type queue struct {
	mu       sync.Mutex
	recs     []*kgo.Record
	bytes    int // recordBytes of recs, summed
	bound    int // QueueRecords
	maxBytes int // QueueBytes
	paused   bool
	pause    func()        // stop fetching the partition
	resume   func()        // fetch it again
	ready    chan struct{} // signalled (cap 1) when records arrive
}

func newQueue(bound, maxBytes int, pause, resume func()) *queue {
	return &queue{bound: bound, maxBytes: maxBytes, pause: pause, resume: resume, ready: make(chan struct{}, 1)}
}

// recordBytes is what a record counts against QueueBytes: its key, value
// and header keys and values. franz-go's own struct per record and the
// fetch buffers records share are not counted.
func recordBytes(r *kgo.Record) int {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// push appends records, pausing the partition when the queue reaches either
// bound.
func (q *queue) push(rs []*kgo.Record) {
	n := 0
	for _, r := range rs {
		n += recordBytes(r)
	}
	q.mu.Lock()
	q.recs = append(q.recs, rs...)
	q.bytes += n
	if (len(q.recs) >= q.bound || q.bytes >= q.maxBytes) && !q.paused {
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
// half of both bounds. It takes a record however large: one above QueueBytes
// pauses the partition on its own and is still handed out (and an empty queue
// is below half of any bound, so the partition then resumes).
func (q *queue) take(n int) []*kgo.Record {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n > len(q.recs) {
		n = len(q.recs)
	}
	rs := append([]*kgo.Record(nil), q.recs[:n]...)
	for _, r := range rs {
		q.bytes -= recordBytes(r)
	}
	left := copy(q.recs, q.recs[n:])
	// Drop the pointers left behind the new end: a stale one would keep its
	// record, the record slice it sits in and its fetch response alive.
	clear(q.recs[left:])
	q.recs = q.recs[:left]
	if q.paused && 2*len(q.recs) < q.bound && 2*q.bytes < q.maxBytes {
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
