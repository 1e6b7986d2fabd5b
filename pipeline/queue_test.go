package pipeline

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
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
	q := newQueue(10, 1<<20, func() { pauses++ }, func() { resumes++ })
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
		{"zero queue bytes", []GroupOpt{Brokers("b:9092"), Topics("t"), Group("g"), Sink(nopApplier{}), QueueBytes(0)}},
		{"negative queue bytes", []GroupOpt{Brokers("b:9092"), Topics("t"), Group("g"), Sink(nopApplier{}), QueueBytes(-1)}},
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
	q := newQueue(100, 1<<20, func() {}, func() {})
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

// sized is n records from offset from, each with a value of size bytes.
func sized(from, n, size int) []*kgo.Record {
	out := recs(from, n)
	for _, r := range out {
		r.Value = make([]byte, size)
	}
	return out
}

// TestQueueBounds: a queue pauses its partition at either bound, records or
// bytes, and resumes it only once below half of both; a record larger than
// the byte bound, or a bound of one, still goes through.
func TestQueueBounds(t *testing.T) {
	type step struct {
		push, size    int // push records of size bytes
		take          int
		pause, resume bool
		wantLen       int
	}
	for _, tc := range []struct {
		name           string
		records, bytes int
		steps          []step
	}{
		{"the byte bound pauses few records", 100, 1000, []step{
			{push: 3, size: 300, wantLen: 3},
			{push: 1, size: 300, pause: true, wantLen: 4}, // 1,200 bytes
			{take: 1, wantLen: 3},                         // 900: not below half
			{take: 1, wantLen: 2},                         // 600
			{take: 1, resume: true, wantLen: 1},           // 300
		}},
		{"records below half, bytes not: still paused", 10, 1000, []step{
			{push: 2, size: 600, pause: true, wantLen: 2},
			{take: 1, wantLen: 1}, // 1 record of 10, 600 bytes of 1,000
			{push: 1, size: 10, wantLen: 2},
			{take: 1, resume: true, wantLen: 1}, // 10 bytes
		}},
		{"bytes below half, records not: still paused", 10, 1000, []step{
			{push: 10, size: 10, pause: true, wantLen: 10},
			{take: 5, wantLen: 5}, // 50 bytes, 5 records of 10
			{take: 1, resume: true, wantLen: 4},
		}},
		{"both bounds at once", 10, 1000, []step{
			{push: 8, size: 100, wantLen: 8},
			{push: 2, size: 100, pause: true, wantLen: 10},
			{take: 5, wantLen: 5}, // 5 records, 500 bytes: half, not below
			{take: 1, resume: true, wantLen: 4},
		}},
		{"a record above the byte bound", 10, 100, []step{
			{push: 1, size: 1000, pause: true, wantLen: 1},
			{take: 1, resume: true},
			{push: 2, size: 1000, pause: true, wantLen: 2},
			{take: 1, wantLen: 1},
			{take: 1, resume: true},
		}},
		{"a byte bound of one", 10, 1, []step{
			{push: 1, size: 0, wantLen: 1}, // no bytes: only the record bound counts it
			{push: 1, size: 1, pause: true, wantLen: 2},
			{take: 2, resume: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pauses, resumes int
			q := newQueue(tc.records, tc.bytes, func() { pauses++ }, func() { resumes++ })
			next, first := 0, 0
			for i, s := range tc.steps {
				p, r := pauses, resumes
				if s.push > 0 {
					q.push(sized(next, s.push, s.size))
					next += s.push
				}
				if s.take > 0 {
					rs := q.take(s.take)
					if len(rs) != s.take || rs[0].Offset != int64(first) {
						t.Fatalf("step %d: took %d records from %v, want %d from offset %d", i, len(rs), rs, s.take, first)
					}
					first += s.take
				}
				if got := pauses > p; got != s.pause {
					t.Errorf("step %d: paused %v, want %v", i, got, s.pause)
				}
				if got := resumes > r; got != s.resume {
					t.Errorf("step %d: resumed %v, want %v", i, got, s.resume)
				}
				if q.len() != s.wantLen {
					t.Fatalf("step %d: len %d, want %d", i, q.len(), s.wantLen)
				}
			}
			if pauses != resumes {
				t.Errorf("%d pauses, %d resumes: the partition was left paused", pauses, resumes)
			}
		})
	}
}

// TestQueueRecordBytes: a record counts its key, its value and its headers'
// keys and values against QueueBytes.
func TestQueueRecordBytes(t *testing.T) {
	for _, tc := range []struct {
		r    kgo.Record
		want int
	}{
		{kgo.Record{}, 0},
		{kgo.Record{Key: []byte("order-1"), Value: []byte("{}")}, 9},
		{kgo.Record{Value: make([]byte, 1000), Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}, {Key: "k"}}}, 1009},
	} {
		if got := recordBytes(&tc.r); got != tc.want {
			t.Errorf("record %+v counts %d bytes, want %d", tc.r, got, tc.want)
		}
	}
}

// TestQueueDefaults: a partition's queue is bounded at 4 x MaxBatch records
// (with MaxInFlight the bound also caps the records held in flight) and 2
// MiB, unless QueueRecords and QueueBytes say otherwise.
func TestQueueDefaults(t *testing.T) {
	base := []GroupOpt{Brokers("b:9092"), Topics("t"), Group("g"), Sink(nopApplier{})}
	for _, tc := range []struct {
		name           string
		opts           []GroupOpt
		records, bytes int
	}{
		{"defaults", nil, 2000, 2 << 20},
		{"max batch", []GroupOpt{MaxBatch(100)}, 400, 2 << 20},
		{"max in flight", []GroupOpt{MaxInFlight(8)}, 2000, 2 << 20},
		{"max in flight and batch", []GroupOpt{MaxInFlight(8), MaxBatch(100)}, 400, 2 << 20},
		{"set", []GroupOpt{QueueRecords(3000), QueueBytes(4096)}, 3000, 4096},
		{"set with max in flight", []GroupOpt{MaxInFlight(8), QueueRecords(3000)}, 3000, 2 << 20},
	} {
		cfg, err := newConfig(append(base[:len(base):len(base)], tc.opts...), true)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r := newRunner(cfg, "g")
		w := newWorker(&r, checkpoint.Partition{Topic: "t"}, 1, "m")
		if w.q.bound != tc.records || w.q.maxBytes != tc.bytes {
			t.Errorf("%s: queue bounded at %d records and %d bytes, want %d and %d",
				tc.name, w.q.bound, w.q.maxBytes, tc.records, tc.bytes)
		}
		if w.e.queueRecords != tc.records {
			t.Errorf("%s: %d records held in flight at most, want %d", tc.name, w.e.queueRecords, tc.records)
		}
	}
}

// TestQueueBoundOfOne: a queue bounded at one record (QueueRecords(1) with
// MaxBatch(1)) resumes its partition once the worker took the record. Below
// half was bound/2 records, none, which an empty queue is not below either:
// the partition stayed paused until the next rebalance.
func TestQueueBoundOfOne(t *testing.T) {
	var pauses, resumes int
	q := newQueue(1, 1<<20, func() { pauses++ }, func() { resumes++ })
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
