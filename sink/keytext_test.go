package sink_test

import (
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/sink"
)

// TestQuoteKey: a key up to 64 bytes is quoted whole, as %q does; a longer
// one by a prefix of at most 32 bytes that cuts no UTF-8 character, with
// its length and a short SHA-256, so the text stays under 200 bytes
// whatever the key.
func TestQuoteKey(t *testing.T) {
	binary := make([]byte, 700000)
	for i := range binary {
		binary[i] = byte(i)
	}
	for _, tc := range []struct {
		name, key, want string
	}{
		{"short", "order-1", `"order-1"`},
		{"empty", "", `""`},
		{"64 bytes", strings.Repeat("k", 64), `"` + strings.Repeat("k", 64) + `"`},
		{"65 bytes", strings.Repeat("a", 65), `"` + strings.Repeat("a", 32) + `…" (65 bytes, sha256 635361c4)`},
		{"binary, 700000 bytes", string(binary),
			`"\x00\x01\x02\x03\x04\x05\x06\a\b\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f…" (700000 bytes, sha256 3b8def08)`},
		{"invalid UTF-8", strings.Repeat("\xff", 100), `"` + strings.Repeat(`\xff`, 32) + `…" (100 bytes, sha256 da6f1497)`},
		{"no character cut", "x" + strings.Repeat("é", 40), `"x` + strings.Repeat("é", 15) + `…" (81 bytes, sha256 85c6ce9f)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sink.QuoteKey(tc.key)
			if got != tc.want {
				t.Fatalf("QuoteKey = %.300s (%d bytes), want %s", got, len(got), tc.want)
			}
			if len(got) >= 200 {
				t.Fatalf("QuoteKey is %d bytes, want under 200", len(got))
			}
		})
	}
}
