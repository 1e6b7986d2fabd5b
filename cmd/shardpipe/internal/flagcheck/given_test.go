package flagcheck

import "testing"

// TestGivenRange: the description a rerun is compared with keeps a
// duration as written and does not depend on the order or repetition of
// --partition-ids.
func TestGivenRange(t *testing.T) {
	tests := []struct {
		from, to string
		parts    []int32
		want     string
	}{
		{"6h", "", nil, "--from 6h --to (end) --partition-ids (all)"},
		{" 6h ", " ", nil, "--from 6h --to (end) --partition-ids (all)"},
		{"0", "500", []int32{3, 0, 3}, "--from 0 --to 500 --partition-ids 0,3"},
		{"2026-11-30T01:00:00Z", "1h", []int32{0, 3}, "--from 2026-11-30T01:00:00Z --to 1h --partition-ids 0,3"},
	}
	for _, tt := range tests {
		if got := GivenRange(tt.from, tt.to, tt.parts); got != tt.want {
			t.Errorf("GivenRange(%q, %q, %v) = %q, want %q", tt.from, tt.to, tt.parts, got, tt.want)
		}
	}
}

// TestSameGiven: a plan stored before --partitions was renamed
// --partition-ids matches the same flags given today, and is shown in
// today's words.
func TestSameGiven(t *testing.T) {
	tests := []struct {
		stored, given, current string
		same                   bool
	}{
		{"--from 0 --to (end) --partition-ids (all)", "--from 0 --to (end) --partition-ids (all)", "--from 0 --to (end) --partition-ids (all)", true},
		{"--from 0 --to (end) --partitions (all)", "--from 0 --to (end) --partition-ids (all)", "--from 0 --to (end) --partition-ids (all)", true},
		{"--from 0 --to (end) --partitions 0,3", "--from 0 --to (end) --partition-ids 3", "--from 0 --to (end) --partition-ids 0,3", false},
		{"", "--from 0 --to (end) --partition-ids (all)", "", false},
	}
	for _, tt := range tests {
		if got := SameGiven(tt.stored, tt.given); got != tt.same {
			t.Errorf("SameGiven(%q, %q) = %v, want %v", tt.stored, tt.given, got, tt.same)
		}
		if got := CurrentGiven(tt.stored); got != tt.current {
			t.Errorf("CurrentGiven(%q) = %q, want %q", tt.stored, got, tt.current)
		}
	}
}
