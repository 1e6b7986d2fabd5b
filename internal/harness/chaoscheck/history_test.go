package chaoscheck

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"
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

// TestCommitValueMember: a commit's value names the member that sent it
// (franz-go commits with its member ID as the metadata) and when the
// coordinator stored it, in the versions a broker writes (3: leader epoch
// and a string; 4: flexible, a compact string), so that a decrease in the
// log says which processes committed the two offsets.
func TestCommitValueMember(t *testing.T) {
	at := time.Date(2026, 11, 30, 16, 3, 8, 717e6, time.UTC)
	v3 := binary.BigEndian.AppendUint16(nil, 3)
	v3 = binary.BigEndian.AppendUint64(v3, 117)
	v3 = binary.BigEndian.AppendUint32(v3, 0)
	v3 = binary.BigEndian.AppendUint16(v3, uint16(len("m-zombie")))
	v3 = append(v3, "m-zombie"...)
	v3 = binary.BigEndian.AppendUint64(v3, uint64(at.UnixMilli()))
	v4 := binary.BigEndian.AppendUint16(nil, 4)
	v4 = binary.BigEndian.AppendUint64(v4, 118)
	v4 = binary.BigEndian.AppendUint32(v4, 0)
	v4 = binary.AppendUvarint(v4, uint64(len("m-owner")+1))
	v4 = append(v4, "m-owner"...)
	v4 = binary.BigEndian.AppendUint64(v4, uint64(at.UnixMilli()))
	for _, tc := range []struct {
		value []byte
		want  Commit
	}{
		{v3, Commit{Offset: 117, Member: "m-zombie", At: at}},
		{v4, Commit{Offset: 118, Member: "m-owner", At: at}},
		{v3[:10], Commit{Offset: 117}},
	} {
		if got := commitValue(tc.value); got.Offset != tc.want.Offset || got.Member != tc.want.Member || !got.At.Equal(tc.want.At) {
			t.Errorf("commitValue(version %d) = %v, want %v", binary.BigEndian.Uint16(tc.value), got, tc.want)
		}
	}
	v := &verdict{}
	log := map[int32][]Commit{5: {{Offset: 100, Member: "a"}, {Offset: 118, Member: "b", At: at}, {Offset: 117, Member: "a", At: at}}}
	if n := checkHistory(map[int32][]int64{5: {100, 118, 117}}, log, v); n != 1 ||
		!strings.Contains(strings.Join(v.violations, ""), `118 by member "b" at 16:03:08.717, then 117 by member "a"`) {
		t.Fatalf("%d decreases, violations %q: want one naming both members", n, v.violations)
	}
}
