package chaoscheck

import (
	"strings"
	"testing"
)

// TestJudgeCommitHistory: with the group's commit log read from
// __consumer_offsets, a lower offset committed after a higher one is a
// violation; on a replicated offsets topic a decrease the watcher saw that
// the log does not hold is a stale read (a new coordinator serving an older
// offset until its high watermark caught up), counted, not a violation;
// without the log every decrease the watcher saw stays a violation.
func TestJudgeCommitHistory(t *testing.T) {
	seen := []Decrease{{Partition: 0, From: 24, To: 22}}
	tests := []struct {
		name       string
		history    map[int32][]int64
		replicated bool
		decreases  []Decrease
		want       string // a violation containing this; "" for none
		stale      int
	}{
		{name: "monotonic", history: map[int32][]int64{0: {1, 2, 2}, 1: {3}}},
		{name: "a lower offset committed", history: map[int32][]int64{0: {1, 2}, 1: {2, 3, 1}},
			want: "partition 1: offset 1 committed after 3"},
		{name: "stale read after a coordinator failover", history: map[int32][]int64{0: {1, 2}, 1: {3}}, replicated: true,
			decreases: seen, stale: 1},
		{name: "a decrease the log holds too", history: map[int32][]int64{0: {2, 1}, 1: {3}}, replicated: true,
			decreases: seen, want: "offset 1 committed after 2", stale: 1},
		{name: "no log: a watched decrease fails", replicated: true, decreases: seen, want: "went back from 24 to 22"},
		{name: "single broker: a watched decrease fails", history: map[int32][]int64{0: {1, 2}, 1: {3}},
			decreases: seen, want: "went back from 24 to 22"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := judge(facts{topic: sample(), ledger: goodLedger(), dlq: goodDLQ(), haveDLQ: true,
				committed: map[int32]int64{0: 2, 1: 3}, watched: true, decreases: tc.decreases,
				polls: Polls{Made: 3, Seen: 2}, history: tc.history, replicated: tc.replicated})
			if r.StaleReads != tc.stale {
				t.Errorf("stale reads %d, want %d", r.StaleReads, tc.stale)
			}
			if tc.want == "" {
				if !r.OK() || r.Decreases != 0 {
					t.Fatalf("want no violation and no decrease, got %d decreases:\n%s", r.Decreases, r)
				}
				return
			}
			if r.OK() || r.Decreases == 0 || !strings.Contains(strings.Join(r.Violations, "\n"), tc.want) {
				t.Fatalf("want a decrease and a violation containing %q, got %d decreases:\n%s", tc.want, r.Decreases, r)
			}
		})
	}
}
