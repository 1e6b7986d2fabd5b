package flagcheck

import (
	"math"
	"testing"
	"time"
)

// TestRange: both ends are inside; NaN and the infinities are outside
// every float range; the range prints as docs/configuration.md's table writes it.
func TestRange(t *testing.T) {
	ints, durs, floats := In(1, 100, ""), In(time.Millisecond, 24*time.Hour, "0: off"), In(0.0, 1, "0: no bound")
	tests := []struct {
		name string
		msg  string
		want string
	}{
		{"int inside", ints.Check(1) + ints.Check(100), ""},
		{"int below", ints.Check(0), "want 1 to 100"},
		{"int above", ints.Check(101), "want 1 to 100"},
		{"duration inside", durs.Check(time.Millisecond) + durs.Check(24*time.Hour), ""},
		{"duration outside", durs.Check(24*time.Hour + time.Nanosecond), "want 1ms to 24h (0: off)"},
		{"float inside", floats.Check(0) + floats.Check(1), ""},
		{"NaN", floats.Check(math.NaN()), "want 0 to 1 (0: no bound)"},
		{"Inf", floats.Check(math.Inf(1)), "want 0 to 1 (0: no bound)"},
		{"-Inf", floats.Check(math.Inf(-1)), "want 0 to 1 (0: no bound)"},
		{"large float", In(0.0, 1e7, "").String(), "0 to 10000000"},
		{"odd duration", In(1500*time.Millisecond, 90*time.Minute, "").String(), "1500ms to 90m"},
		{"zero duration", In(time.Duration(0), time.Second, "").String(), "0s to 1s"},
	}
	for _, tt := range tests {
		if tt.msg != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.msg, tt.want)
		}
	}
}
