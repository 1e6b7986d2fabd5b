package checkpoint

import (
	"testing"
)

func TestTrackerOutOfOrder(t *testing.T) {
	p := Partition{Topic: "t", Partition: 1}
	tr := NewTracker(p, 100)
	if e := tr.CommitLeaderEpoch(); e != -1 {
		t.Fatalf("leader epoch %d before any record, want -1", e)
	}
	// 102 is a gap (compaction); the partition's leader changed before 103.
	for _, r := range []struct {
		o int64
		e int32
	}{{100, 3}, {101, 3}, {103, 4}, {104, 4}} {
		if err := tr.Start(r.o, r.e); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		land  int64
		want  int64
		epoch int32 // leader epoch of the record before the commit point
	}{
		{101, 100, -1}, // 100 still unknown
		{104, 100, -1},
		{100, 102, 3}, // 100 and 101 landed; 103 unknown
		{103, 105, 4}, // all landed; the gap is skipped
	}
	for _, s := range steps {
		if err := tr.Land(s.land); err != nil {
			t.Fatal(err)
		}
		if got, e := tr.CommitPoint(), tr.CommitLeaderEpoch(); got != s.want || e != s.epoch {
			t.Fatalf("after landing %d: commit point %d leader epoch %d, want %d and %d", s.land, got, e, s.want, s.epoch)
		}
	}
	if tr.InFlight() != 0 || tr.LandedSinceCommit() != 4 || !tr.Dirty() {
		t.Fatalf("in flight %d, landed %d, dirty %v", tr.InFlight(), tr.LandedSinceCommit(), tr.Dirty())
	}
	tr.Committed(105)
	if tr.Dirty() || tr.LandedSinceCommit() != 0 {
		t.Fatal("Committed did not reset the tracker's uncommitted state")
	}
}

func TestTrackerRejects(t *testing.T) {
	tr := NewTracker(Partition{Topic: "t"}, 10)
	cases := []struct {
		name string
		do   func() error
	}{
		{"start below the commit point", func() error { return tr.Start(9, 0) }},
		{"land an offset never started", func() error { return tr.Land(10) }},
		{"start not increasing", func() error { _ = tr.Start(12, 0); return tr.Start(11, 0) }},
		{"land twice", func() error { _ = tr.Land(12); return tr.Land(12) }},
	}
	for _, c := range cases {
		if err := c.do(); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestTrackerExhaustive lands five records in every one of the 120 orders and,
// after every step, compares the commit point with the definition: the offset
// after the longest landed prefix.
func TestTrackerExhaustive(t *testing.T) {
	offsets := []int64{5, 6, 8, 9, 12}
	var permute func([]int64, int)
	count := 0
	permute = func(a []int64, k int) {
		if k == len(a) {
			count++
			checkOrder(t, offsets, a)
			return
		}
		for i := k; i < len(a); i++ {
			a[k], a[i] = a[i], a[k]
			permute(a, k+1)
			a[k], a[i] = a[i], a[k]
		}
	}
	permute(append([]int64(nil), offsets...), 0)
	if count != 120 {
		t.Fatalf("checked %d orders, want 120", count)
	}
}

func checkOrder(t *testing.T, offsets, order []int64) {
	t.Helper()
	tr := NewTracker(Partition{Topic: "t"}, offsets[0])
	for _, o := range offsets {
		if err := tr.Start(o, 0); err != nil {
			t.Fatal(err)
		}
	}
	landed := map[int64]bool{}
	for _, o := range order {
		if err := tr.Land(o); err != nil {
			t.Fatal(err)
		}
		landed[o] = true
		want := offsets[0]
		for _, x := range offsets {
			if !landed[x] {
				break
			}
			want = x + 1
		}
		if got := tr.CommitPoint(); got != want {
			t.Fatalf("order %v: after %d commit point %d, want %d", order, o, got, want)
		}
	}
}

// TestTrackerSinceCommit counts what a restart from the last commit reads
// again when records land out of order: the folded ones since the commit
// and every one in flight, landed past a hole or not.
func TestTrackerSinceCommit(t *testing.T) {
	tr := NewTracker(Partition{Topic: "t"}, 0)
	steps := []struct {
		op       string // start, land, commit
		offset   int64
		since    int
		landed   int
		inFlight int
	}{
		{"start", 0, 1, 0, 1},
		{"start", 1, 2, 0, 2},
		{"start", 2, 3, 0, 3},
		{"land", 1, 3, 1, 3}, // past the hole at 0
		{"land", 0, 3, 2, 1}, // 0 and 1 folded
		{"commit", 2, 1, 0, 1},
		{"start", 3, 2, 0, 2},
		{"land", 3, 2, 1, 2},   // past 2, still unknown
		{"commit", 2, 2, 1, 2}, // a commit at the same point: 3 is still read again, and counts as landed
		{"land", 2, 2, 2, 0},
		{"commit", 4, 0, 0, 0},
	}
	for i, s := range steps {
		var err error
		switch s.op {
		case "start":
			err = tr.Start(s.offset, 0)
		case "land":
			err = tr.Land(s.offset)
		case "commit":
			tr.Committed(s.offset)
		}
		if err != nil {
			t.Fatal(err)
		}
		if tr.SinceCommit() != s.since || tr.LandedSinceCommit() != s.landed || tr.InFlight() != s.inFlight {
			t.Fatalf("step %d (%s %d): since %d landed %d in flight %d, want %d %d %d", i, s.op, s.offset,
				tr.SinceCommit(), tr.LandedSinceCommit(), tr.InFlight(), s.since, s.landed, s.inFlight)
		}
	}
}

// TestTrackerLastCommitted: before any commit the tracker knows the start
// (the offset resumed from) as committed; after, the highest offset
// handed to Committed.
func TestTrackerLastCommitted(t *testing.T) {
	tests := []struct {
		commits []int64
		want    int64
	}{{nil, 20}, {[]int64{25}, 25}, {[]int64{25, 22}, 25}}
	for _, tt := range tests {
		tr := NewTracker(Partition{Topic: "t"}, 20)
		for _, c := range tt.commits {
			tr.Committed(c)
		}
		if got := tr.LastCommitted(); got != tt.want {
			t.Errorf("after %v: LastCommitted %d, want %d", tt.commits, got, tt.want)
		}
	}
}
