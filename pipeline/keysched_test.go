package pipeline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// TestKeySchedSteps walks the scheduler through fixed sequences, in the
// style of etcd raft's table tests: each step is one call and what it must
// answer, so a change of behaviour names the step it broke.
func TestKeySchedSteps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type step struct {
		op   string // add KEY OFF | next | done KEY | retry KEY SECONDS | at SECONDS (the clock)
		want string // next: "KEY@OFF/FAILURES" or "-"; empty for other ops
	}
	cases := []struct {
		name  string
		max   int
		steps []step
	}{
		{"one key runs in offset order, one at a time", 4, []step{
			{"add a 1", ""}, {"add a 2", ""}, {"add a 3", ""},
			{"next", "a@1/0"}, {"next", "-"},
			{"done a", ""}, {"next", "a@2/0"}, {"next", "-"},
			{"done a", ""}, {"next", "a@3/0"}, {"done a", ""}, {"next", "-"},
		}},
		{"different keys run at once, lowest offset first", 4, []step{
			{"add b 1", ""}, {"add a 2", ""}, {"add c 3", ""}, {"add a 4", ""},
			{"next", "b@1/0"}, {"next", "a@2/0"}, {"next", "c@3/0"}, {"next", "-"},
			{"done a", ""}, {"next", "a@4/0"},
		}},
		{"the cap holds the rest back", 2, []step{
			{"add a 1", ""}, {"add b 2", ""}, {"add c 3", ""},
			{"next", "a@1/0"}, {"next", "b@2/0"}, {"next", "-"},
			{"done b", ""}, {"next", "c@3/0"}, {"next", "-"},
		}},
		{"a failed head waits for its time, its key behind it, others go on", 4, []step{
			{"add a 1", ""}, {"add a 2", ""}, {"add b 3", ""},
			{"next", "a@1/0"}, {"next", "b@3/0"},
			{"retry a 5", ""}, {"next", "-"}, // a@2 waits behind a@1
			{"done b", ""}, {"add b 4", ""}, {"next", "b@4/0"},
			{"at 4", ""}, {"next", "-"},
			{"at 5", ""}, {"next", "a@1/1"},
			{"retry a 7", ""}, {"at 7", ""}, {"next", "a@1/2"},
			{"done a", ""}, {"next", "a@2/0"},
		}},
		{"a retried head comes before later heads once due", 1, []step{
			{"add a 1", ""}, {"add b 2", ""},
			{"next", "a@1/0"}, {"retry a 1", ""},
			{"next", "b@2/0"}, {"at 1", ""}, {"next", "-"}, // the cap
			{"done b", ""}, {"next", "a@1/1"},
		}},
		{"retries due at once run by time, then offset", 4, []step{
			{"add a 1", ""}, {"add b 2", ""}, {"add c 3", ""},
			{"next", "a@1/0"}, {"next", "b@2/0"}, {"next", "c@3/0"},
			{"retry c 2", ""}, {"retry b 3", ""}, {"retry a 3", ""},
			{"at 3", ""}, {"next", "a@1/1"}, {"next", "b@2/1"}, {"next", "c@3/1"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newKeySched[int](c.max)
			now := t0
			for i, st := range c.steps {
				f := strings.Fields(st.op)
				var n int64
				if len(f) == 3 {
					_, _ = fmt.Sscan(f[2], &n)
				}
				switch f[0] {
				case "add":
					s.Add(f[1], n, 0)
				case "done":
					s.Done(f[1])
				case "retry":
					s.Retry(f[1], t0.Add(time.Duration(n)*time.Second))
				case "at":
					_, _ = fmt.Sscan(f[1], &n)
					now = t0.Add(time.Duration(n) * time.Second)
				case "next":
					got := "-"
					if k, it, ok := s.Next(now); ok {
						got = fmt.Sprintf("%s@%d/%d", k, it.Offset, it.Failures)
					}
					if got != st.want {
						t.Fatalf("step %d (%s): got %s, want %s", i, st.op, got, st.want)
					}
				}
			}
		})
	}
}

// TestKeySchedHeld counts what the scheduler holds and hands back at a stop.
func TestKeySchedHeld(t *testing.T) {
	t0 := time.Unix(0, 0)
	s := newKeySched[string](8)
	for i, k := range []string{"a", "b", "a", "c"} {
		s.Add(k, int64(10+i), k)
	}
	for range 3 {
		s.Next(t0)
	}
	s.Retry("c", t0.Add(time.Second))
	s.Retry("a", t0.Add(2*time.Second))
	if s.Held() != 4 || s.Running() != 1 || s.Waiting() != 2 {
		t.Fatalf("held %d running %d waiting %d, want 4 1 2", s.Held(), s.Running(), s.Waiting())
	}
	if at, ok := s.WakeAt(); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("wake at %v %v, want %v", at, ok, t0.Add(time.Second))
	}
	heads := s.WaitingHeads()
	if len(heads) != 2 || heads[0].Offset != 10 || heads[1].Offset != 13 || heads[0].Failures != 1 {
		t.Fatalf("waiting heads %+v, want offsets 10 and 13 with one failure each", heads)
	}
}

// TestKeySchedExhaustive runs every assignment of keys to a partition's
// records, under every cap, through every order in which the running
// effects can land or fail (each record failing at most once), with a
// checkpoint.Tracker beside the scheduler as the worker keeps one. In every
// state: no more than the cap run; no key runs twice at once; a key's
// records start in offset order; the scheduler leaves no slot idle while a
// key could run; and the commit point is just past the records landed before the first
// that has not (a restart there reads it first).
// Every path ends with every record landed and the commit point past them.
func TestKeySchedExhaustive(t *testing.T) {
	const n = 4
	offsets := [n]int64{3, 4, 6, 9} // gaps, as compaction leaves them
	keys := []string{"a", "b", "c"}
	paths := 0
	var assign [n]string
	var each func(i int)
	each = func(i int) {
		if i == n {
			for max := 1; max <= 3; max++ {
				paths += explore(t, offsets[:], assign[:], max)
			}
			return
		}
		for _, k := range keys {
			assign[i] = k
			each(i + 1)
		}
	}
	each(0)
	if paths < 10000 {
		t.Fatalf("explored %d paths; the enumeration is broken", paths)
	}
	t.Logf("explored %d paths", paths)
}

// explore checks every path of one assignment under one cap and returns
// how many it ran to the end.
func explore(t *testing.T, offsets []int64, keys []string, max int) int {
	t.Helper()
	type state struct {
		s       *keySched[int]
		tr      *checkpoint.Tracker
		now     time.Time
		landed  []bool
		failed  []bool
		running []int   // indexes of running records
		started [][]int // per key index, the record indexes started, in order
	}
	keyIx := map[string]int{"a": 0, "b": 1, "c": 2}
	fresh := func() *state {
		st := &state{s: newKeySched[int](max), tr: checkpoint.NewTracker(checkpoint.Partition{Topic: "t"}, offsets[0]),
			now: time.Unix(0, 0), landed: make([]bool, len(offsets)), failed: make([]bool, len(offsets)), started: make([][]int, 3)}
		for i, o := range offsets {
			st.s.Add(keys[i], o, i)
			if err := st.tr.Start(o, 0); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	// fill starts what the scheduler lets run and checks the state. walk
	// rebuilds a state from the choices made so far (a choice is +i+1:
	// record i lands; -(i+1): record i fails), so that the search needs no
	// copy of the scheduler.
	fill := func(st *state) string {
		for {
			_, it, ok := st.s.Next(st.now)
			if !ok {
				break
			}
			i := it.V
			for _, r := range st.running {
				if keys[r] == keys[i] {
					return fmt.Sprintf("key %s runs twice", keys[i])
				}
			}
			ki := keyIx[keys[i]]
			if prev := st.started[ki]; len(prev) > 0 && prev[len(prev)-1] > i {
				return fmt.Sprintf("key %s started offset %d after %d", keys[i], offsets[i], offsets[prev[len(prev)-1]])
			}
			if prev := st.started[ki]; len(prev) == 0 || prev[len(prev)-1] != i {
				st.started[ki] = append(st.started[ki], i)
			}
			st.running = append(st.running, i)
		}
		if len(st.running) > max {
			return fmt.Sprintf("%d running over the cap %d", len(st.running), max)
		}
		if len(st.running) < max {
			// Work conserving (a failed record's retry is due at once
			// here): every key holding records runs one.
			busy := map[string]bool{}
			for _, r := range st.running {
				busy[keys[r]] = true
			}
			for i := range offsets {
				if !st.landed[i] && !busy[keys[i]] {
					return fmt.Sprintf("slot idle while key %s could run", keys[i])
				}
			}
		}
		// The offset after the last record of the landed prefix (a
		// restart there reads the first record not landed first).
		want := offsets[0]
		for i := range offsets {
			if !st.landed[i] {
				break
			}
			want = offsets[i] + 1
		}
		if got := st.tr.CommitPoint(); got != want {
			return fmt.Sprintf("commit point %d, want %d", got, want)
		}
		return ""
	}
	apply := func(st *state, c int) {
		i := c - 1
		if c < 0 {
			i = -c - 1
		}
		for j, r := range st.running {
			if r == i {
				st.running = append(st.running[:j], st.running[j+1:]...)
				break
			}
		}
		if c > 0 {
			st.s.Done(keys[i])
			st.landed[i] = true
			if err := st.tr.Land(offsets[i]); err != nil {
				t.Fatal(err)
			}
			return
		}
		st.failed[i] = true
		st.now = st.now.Add(time.Second) // the retry is due at once
		st.s.Retry(keys[i], st.now)
	}
	paths := 0
	var walk func(choices []int)
	walk = func(choices []int) {
		st := fresh()
		for _, c := range choices {
			if msg := fill(st); msg != "" {
				t.Fatalf("keys %v cap %d choices %v: %s", keys, max, choices, msg)
			}
			apply(st, c)
		}
		if msg := fill(st); msg != "" {
			t.Fatalf("keys %v cap %d choices %v: %s", keys, max, choices, msg)
		}
		if len(st.running) == 0 {
			for i := range offsets {
				if !st.landed[i] {
					t.Fatalf("keys %v cap %d choices %v: offset %d never ran", keys, max, choices, offsets[i])
				}
			}
			if st.s.Held() != 0 || st.s.Waiting() != 0 || st.tr.CommitPoint() != offsets[len(offsets)-1]+1 {
				t.Fatalf("keys %v cap %d: end with %d held, commit point %d", keys, max, st.s.Held(), st.tr.CommitPoint())
			}
			paths++
			return
		}
		for _, r := range append([]int(nil), st.running...) {
			walk(append(choices[:len(choices):len(choices)], r+1))
			if !st.failed[r] {
				walk(append(choices[:len(choices):len(choices)], -(r + 1)))
			}
		}
	}
	walk(nil)
	return paths
}
