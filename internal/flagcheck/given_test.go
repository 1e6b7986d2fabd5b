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
		{"6h", "", nil, "--from 6h --to (end) --partitions (all)"},
		{" 6h ", " ", nil, "--from 6h --to (end) --partitions (all)"},
		{"0", "500", []int32{3, 0, 3}, "--from 0 --to 500 --partitions 0,3"},
		{"2026-11-30T01:00:00Z", "1h", []int32{0, 3}, "--from 2026-11-30T01:00:00Z --to 1h --partitions 0,3"},
	}
	for _, tt := range tests {
		if got := GivenRange(tt.from, tt.to, tt.parts); got != tt.want {
			t.Errorf("GivenRange(%q, %q, %v) = %q, want %q", tt.from, tt.to, tt.parts, got, tt.want)
		}
	}
}
