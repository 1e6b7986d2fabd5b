package pipeline

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClipText: text within the bound is kept; longer text is cut to the
// bound, on a UTF-8 boundary, saying how long it was.
func TestClipText(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		n       int
		want    string
	}{
		{"within", "abc", 3, "abc"},
		{"empty", "", 0, ""},
		{"cut", strings.Repeat("a", 100), 40, strings.Repeat("a", 18) + "… (100 bytes in all)"},
		{"no character cut", strings.Repeat("é", 50), 41, strings.Repeat("é", 9) + "… (100 bytes in all)"},
		{"bound under the tail", strings.Repeat("a", 100), 5, "… (100 bytes in all)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clipText(tc.s, tc.n)
			if got != tc.want || !utf8.ValidString(got) {
				t.Fatalf("clipText(%d bytes, %d) = %q, want %q", len(tc.s), tc.n, got, tc.want)
			}
			if len(got) > max(tc.n, len(tc.want)) {
				t.Fatalf("clipText = %d bytes, want at most %d", len(got), tc.n)
			}
		})
	}
}
