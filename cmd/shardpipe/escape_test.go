package main

import (
	"strings"
	"testing"
)

// TestEscapeControl: control characters (C0, DEL, C1) and bytes that are
// not UTF-8 are escaped as Go writes them in a quoted string; the rest,
// quotes and backslashes included, is left as it is.
func TestEscapeControl(t *testing.T) {
	tests := []struct{ in, want string }{
		{"no such topic \"orders\"", "no such topic \"orders\""},
		{"a\x1b[31mred", `a\x1b[31mred`},
		{"line\nshardpipe: forged", `line\nshardpipe: forged`},
		{"\r\t\x00\x7f", `\r\t\x00\x7f`},
		{"next\u0085line", `next\u0085line`},
		{"café ✓", "café ✓"},
		{"bad \xff byte", `bad \xff byte`},
		{`C:\path`, `C:\path`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := escapeControl(tt.in); got != tt.want {
			t.Errorf("escapeControl(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestProblemLinesEscaped: a problem that quotes what the user typed (an
// unknown flag) prints its control bytes escaped: no terminal escape
// reaches stderr and a newline cannot forge a line of its own.
func TestProblemLinesEscaped(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"--to\x1b[2Jpic=x", `-to\x1b[2Jpic`},
		{"--to\npic=x", `-to\npic`},
	}
	for _, tt := range tests {
		code, _, stderr := call(t, nil, "run", tt.arg)
		if code != exitUsage {
			t.Fatalf("%q: exit %d, want %d: %s", tt.arg, code, exitUsage, stderr)
		}
		if strings.ContainsAny(stderr, "\x1b\r") || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: stderr %q, want %q with no raw control byte", tt.arg, stderr, tt.want)
		}
		for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			if !strings.HasPrefix(l, "shardpipe: ") {
				t.Errorf("%q: stderr line %q does not start with \"shardpipe: \"", tt.arg, l)
			}
		}
	}
}
