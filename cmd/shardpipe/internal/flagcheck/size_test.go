package flagcheck

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "4096", want: 4096},
		{in: "0", want: 0},
		{in: "10B", want: 10},
		{in: "2MiB", want: 2 << 20},
		{in: "512 KiB", want: 512 << 10},
		{in: "512kib", want: 512 << 10},
		{in: "1GiB", want: 1 << 30},
		{in: "3KB", want: 3000},
		{in: "8mb", want: 8_000_000},
		{in: "2GB", want: 2_000_000_000},
		{in: " 7 MiB ", want: 7 << 20},
		{in: "", bad: true},
		{in: "MiB", bad: true},
		{in: "-1MiB", bad: true},
		{in: "1.5MiB", bad: true},
		{in: "2M", bad: true},
		{in: "2 TiB", bad: true},
		{in: "twelve", bad: true},
		{in: "99999999999GiB", bad: true}, // past int64
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		switch {
		case tt.bad && err == nil:
			t.Errorf("ParseSize(%q) = %d, want an error", tt.in, got)
		case tt.bad && !strings.Contains(err.Error(), "is not a size: want a whole number of bytes"):
			t.Errorf("ParseSize(%q): error %q does not say what it wants", tt.in, err)
		case !tt.bad && (err != nil || got != tt.want):
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatSizeReadsBack(t *testing.T) {
	for _, n := range []int64{0, 1, 1000, 1024, 1536, 2 << 20, 3 << 30, 1<<30 + 1} {
		s := FormatSize(n)
		if got, err := ParseSize(s); err != nil || got != n {
			t.Errorf("FormatSize(%d) = %q, read back as %d, %v", n, s, got, err)
		}
	}
	if got := FormatSize(2 << 20); got != "2MiB" {
		t.Errorf("FormatSize(2MiB) = %q", got)
	}
}
