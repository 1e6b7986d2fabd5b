package pipeline

import (
	"container/heap"
	"time"
)

// keySched holds the records of one partition that were admitted and have
// not landed, and says which may run now: the records of one business key
// one after another in offset order, the heads of different keys at once,
// at most max at a time, the lowest offset first. A head whose effect
// failed waits for its retry time, and the key's later records wait behind
// it; the other keys go on.
//
// It is plain code with no clock and no I/O (the caller passes the time),
// as the commit rules and checkpoint.Tracker are: the worker owns one per
// term and is its only user. Records are added in increasing offset order.
// Next, Done and Retry cost O(log keys); memory is one entry per held
// record and one per key holding records.
type keySched[T any] struct {
	max     int
	running int
	held    int
	keys    map[string]*keyLine[T]
	ready   lineHeap[T] // idle keys whose head may run, by head offset
	waiting lineHeap[T] // keys whose head waits for its retry time, by that time
}

// schedItem is one held record: its offset, the failures of its effect so
// far, and the caller's value.
type schedItem[T any] struct {
	Offset   int64
	Failures int
	V        T
}

// line states.
const (
	lineReady   = iota // head may run (in ready)
	lineRunning        // head runs
	lineWaiting        // head waits for at (in waiting)
)

// keyLine is one key's held records, in offset order; items[0] is the head.
type keyLine[T any] struct {
	key   string
	items []schedItem[T]
	state int
	at    time.Time // lineWaiting: when the head may run again
	index int       // position in ready or waiting
}

func newKeySched[T any](max int) *keySched[T] {
	s := &keySched[T]{max: max, keys: map[string]*keyLine[T]{}}
	s.ready.less = func(a, b *keyLine[T]) bool { return a.items[0].Offset < b.items[0].Offset }
	s.waiting.less = func(a, b *keyLine[T]) bool {
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return a.items[0].Offset < b.items[0].Offset
	}
	return s
}

// Add holds the record at offset, of business key key.
func (s *keySched[T]) Add(key string, offset int64, v T) {
	s.held++
	l, ok := s.keys[key]
	if !ok {
		l = &keyLine[T]{key: key, state: lineReady}
		s.keys[key] = l
		l.items = append(l.items, schedItem[T]{Offset: offset, V: v})
		heap.Push(&s.ready, l)
		return
	}
	l.items = append(l.items, schedItem[T]{Offset: offset, V: v})
}

// Next returns the record to run now, if any: none while max run, else the
// lowest-offset head among the keys with none running and no retry time
// still ahead of now. The record runs until Done or Retry for its key.
func (s *keySched[T]) Next(now time.Time) (string, schedItem[T], bool) {
	for s.waiting.Len() > 0 && !s.waiting.items[0].at.After(now) {
		l := heap.Pop(&s.waiting).(*keyLine[T])
		l.state, l.at = lineReady, time.Time{}
		heap.Push(&s.ready, l)
	}
	if s.running >= s.max || s.ready.Len() == 0 {
		return "", schedItem[T]{}, false
	}
	l := heap.Pop(&s.ready).(*keyLine[T])
	l.state = lineRunning
	s.running++
	return l.key, l.items[0], true
}

// Done ends the running head of key: it landed (or was dead-lettered).
// The key's next record may run.
func (s *keySched[T]) Done(key string) {
	l := s.mustRun(key)
	s.running--
	s.held--
	clear(l.items[:1])
	l.items = l.items[1:]
	if len(l.items) == 0 {
		delete(s.keys, key)
		return
	}
	l.state = lineReady
	heap.Push(&s.ready, l)
}

// Retry ends the running head of key with a failure: it runs again, its
// Failures one more, not before at, and the key's later records wait.
func (s *keySched[T]) Retry(key string, at time.Time) {
	l := s.mustRun(key)
	s.running--
	l.items[0].Failures++
	l.state, l.at = lineWaiting, at
	heap.Push(&s.waiting, l)
}

func (s *keySched[T]) mustRun(key string) *keyLine[T] {
	l, ok := s.keys[key]
	if !ok || l.state != lineRunning {
		panic("pipeline: keySched: key " + key + " has no running record")
	}
	return l
}

// WakeAt is the earliest retry time of a waiting head; false when none waits.
func (s *keySched[T]) WakeAt() (time.Time, bool) {
	if s.waiting.Len() == 0 {
		return time.Time{}, false
	}
	return s.waiting.items[0].at, true
}

// Running counts the records running; Held those held (running, waiting
// for a retry, or queued behind their key or the cap); Waiting the heads
// waiting for a retry.
func (s *keySched[T]) Running() int { return s.running }
func (s *keySched[T]) Held() int    { return s.held }
func (s *keySched[T]) Waiting() int { return s.waiting.Len() }

// CanRun reports whether Next(now) would return a record.
func (s *keySched[T]) CanRun(now time.Time) bool {
	if s.running >= s.max {
		return false
	}
	return s.ready.Len() > 0 || s.waiting.Len() > 0 && !s.waiting.items[0].at.After(now)
}

// DropWaiting removes every key whose head waits for a retry, with the
// records queued behind it, and returns those heads by offset: at a stop,
// the records whose effects failed with no retry to come (the ones behind
// them were never started).
func (s *keySched[T]) DropWaiting() []schedItem[T] {
	heads := s.WaitingHeads()
	for _, l := range s.waiting.items {
		s.held -= len(l.items)
		delete(s.keys, l.key)
	}
	s.waiting.items = s.waiting.items[:0]
	return heads
}

// WaitingHeads returns the heads waiting for a retry, by offset: at a
// stop, the records whose effects failed with no retry to come.
func (s *keySched[T]) WaitingHeads() []schedItem[T] {
	out := make([]schedItem[T], 0, s.waiting.Len())
	for _, l := range s.waiting.items {
		out = append(out, l.items[0])
	}
	for i := 1; i < len(out); i++ { // few: insertion sort
		for j := i; j > 0 && out[j].Offset < out[j-1].Offset; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// lineHeap is a container/heap of key lines ordered by less.
type lineHeap[T any] struct {
	items []*keyLine[T]
	less  func(a, b *keyLine[T]) bool
}

func (h *lineHeap[T]) Len() int           { return len(h.items) }
func (h *lineHeap[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *lineHeap[T]) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index, h.items[j].index = i, j
}
func (h *lineHeap[T]) Push(x any) {
	l := x.(*keyLine[T])
	l.index = len(h.items)
	h.items = append(h.items, l)
}
func (h *lineHeap[T]) Pop() any {
	n := len(h.items) - 1
	l := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	return l
}
