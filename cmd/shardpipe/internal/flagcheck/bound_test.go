package flagcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
)

func TestParseBound(t *testing.T) {
	now := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    pipeline.Bound
		wantErr string
	}{
		{"0", pipeline.AtOffset(0), ""},
		{"1234", pipeline.AtOffset(1234), ""},
		{"2026-11-30T04:00:00Z", pipeline.AtTime(time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)), ""},
		{"2026-11-30T05:00:00.250+01:00", pipeline.AtTime(time.Date(2026, 11, 30, 4, 0, 0, 250e6, time.UTC)), ""},
		{"90m", pipeline.AtTime(now.Add(-90 * time.Minute)), ""},
		{"-5", pipeline.Bound{}, "negative"},
		{"-5m", pipeline.Bound{}, "positive duration"},
		{"yesterday", pipeline.Bound{}, "want an offset"},
		{"2026-11-30", pipeline.Bound{}, "want an offset"},
	}
	for _, tt := range tests {
		got, err := ParseBound(tt.in, now)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseBound(%q) error %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.String() != tt.want.String() {
			t.Errorf("ParseBound(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestRangeOrder: two offsets or two times whose start is not before the
// end are an empty range; an offset against a time, the open end and an
// unparsable bound are not judged here.
func TestRangeOrder(t *testing.T) {
	now := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	tests := []struct{ from, to, want string }{
		{"500", "100", "offset 500 is not before offset 100"},
		{"100", "100", "offset 100 is not before offset 100"},
		{"100", "500", ""},
		{"30m", "2h", "2026-11-30T05:30:00Z is not before 2026-11-30T04:00:00Z"},
		{"2026-11-30T04:00:00Z", "2h", "2026-11-30T04:00:00Z is not before 2026-11-30T04:00:00Z"},
		{"2h", "30m", ""},
		{"500", "2h", ""},
		{"500", "", ""},
		{"x", "100", ""},
	}
	for _, tt := range tests {
		if got := RangeOrder(tt.from, tt.to, now); got != tt.want {
			t.Errorf("RangeOrder(%q, %q) = %q, want %q", tt.from, tt.to, got, tt.want)
		}
	}
}

// TestRelative: only a positive duration is a bound that moves with now.
func TestRelative(t *testing.T) {
	for in, want := range map[string]bool{"90m": true, " 3m ": true, "0": false, "500": false, "2026-11-30T04:00:00Z": false, "-5m": false, "x": false, "": false} {
		if got := Relative(in); got != want {
			t.Errorf("Relative(%q) = %v, want %v", in, got, want)
		}
	}
}
