package cliflags

import "testing"

// TestSuggest: a typo close to one name suggests it; a word far from all
// suggests nothing.
func TestSuggest(t *testing.T) {
	names := []string{"run", "produce", "status", "replay", "reset-offsets", "brokers", "partition-ids", "json"}
	tests := []struct{ in, want string }{
		{"rnu", "run"},
		{"reset-offset", "reset-offsets"},
		{"brokerz", "brokers"},
		{"partitions", "partition-ids"},
		{"jsno", "json"},
		{"RUN", "run"},
		{"zzzz", ""},
		{"x", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.in, names); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
