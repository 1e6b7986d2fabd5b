package pipeline

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func recs(from, n int) []*kgo.Record {
	out := make([]*kgo.Record, n)
	for i := range out {
		out[i] = &kgo.Record{Offset: int64(from + i)}
	}
	return out
}

// TestQueueBackpressure: a queue pauses its partition at the bound, resumes
// it below half, and hands records out in order.
func TestQueueBackpressure(t *testing.T) {
	var pauses, resumes int
	q := newQueue(10, func() { pauses++ }, func() { resumes++ })
	steps := []struct {
		push, take     int
		pause, resume  bool
		wantLen, first int
	}{
		{push: 6, pause: false, wantLen: 6},
		{push: 6, pause: true, wantLen: 12},
		{push: 3, pause: false, wantLen: 15}, // already paused: no second pause
		{take: 5, resume: false, wantLen: 10, first: 0},
		{take: 5, resume: false, wantLen: 5, first: 5},
		{take: 1, resume: true, wantLen: 4, first: 10},
		{take: 9, resume: false, wantLen: 0, first: 11},
	}
	next := 0
	for i, s := range steps {
		if s.push > 0 {
			before := pauses
			q.push(recs(next, s.push))
			if got := pauses > before; got != s.pause {
				t.Fatalf("step %d: push paused=%v, want %v", i, got, s.pause)
			}
			next += s.push
		}
		if s.take > 0 {
			before := resumes
			rs := q.take(s.take)
			if got := resumes > before; got != s.resume {
				t.Fatalf("step %d: take resumed=%v, want %v", i, got, s.resume)
			}
			if len(rs) > 0 && rs[0].Offset != int64(s.first) {
				t.Fatalf("step %d: first offset %d, want %d", i, rs[0].Offset, s.first)
			}
		}
		if q.len() != s.wantLen {
			t.Fatalf("step %d: len %d, want %d", i, q.len(), s.wantLen)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		opts []GroupOpt
	}{
		{"nothing", nil},
		{"no sink", []GroupOpt{Brokers("b:9092"), Topics("t"), Group("g")}},
		{"negative commit every", []GroupOpt{Brokers("b:9092"), Topics("t"), Group("g"), Sink(nopApplier{}), CommitEvery(-1)}},
		{"negative max uncommitted", []GroupOpt{Brokers("b:9092"), Topics("t"), Group("g"), Sink(nopApplier{}), MaxUncommitted(-1)}},
		{"max uncommitted below commit every", []GroupOpt{Brokers("b:9092"), Topics("t"), Group("g"), Sink(nopApplier{}),
			CommitEvery(100), MaxUncommitted(99)}},
		{"queue below batch", []GroupOpt{Brokers("b:9092"), Topics("t"), Group("g"), Sink(nopApplier{}), MaxBatch(10), QueueRecords(5)}},
	}
	for _, c := range cases {
		if _, err := New(c.opts...); err == nil {
			t.Errorf("%s: New accepted it", c.name)
		}
	}
	if _, err := ParseProtocol("eager"); err == nil {
		t.Error("ParseProtocol accepted eager")
	}
}

// TestQueueTakeDropsTakenRecords: once taken, a record is no longer
// referenced by the queue's backing array, where it would keep its fetch
// response alive (memory grew with the topic before this).
func TestQueueTakeDropsTakenRecords(t *testing.T) {
	q := newQueue(100, func() {}, func() {})
	q.push(recs(0, 8))
	q.take(5)
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.recs) != 3 || q.recs[0].Offset != 5 {
		t.Fatalf("queue holds %d records from %v, want 3 from offset 5", len(q.recs), q.recs)
	}
	for i, r := range q.recs[len(q.recs):cap(q.recs)] {
		if r != nil {
			t.Errorf("slot %d behind the end still points at offset %d", len(q.recs)+i, r.Offset)
		}
	}
}

// TestQueueBoundOfOne: a queue bounded at one record (QueueRecords(1) with
// MaxBatch(1)) resumes its partition once the worker took the record. Below
// half was bound/2 records, none, which an empty queue is not below either:
// the partition stayed paused until the next rebalance.
func TestQueueBoundOfOne(t *testing.T) {
	var pauses, resumes int
	q := newQueue(1, func() { pauses++ }, func() { resumes++ })
	for i := range 3 {
		q.push(recs(i, 1))
		if pauses != i+1 {
			t.Fatalf("record %d: %d pauses, want %d", i, pauses, i+1)
		}
		if rs := q.take(1); len(rs) != 1 || rs[0].Offset != int64(i) {
			t.Fatalf("record %d: took %v", i, rs)
		}
		if resumes != i+1 {
			t.Fatalf("record %d: %d resumes, want %d: the partition stays paused", i, resumes, i+1)
		}
	}
}
