package typo

import (
	"slices"
	"testing"
)

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

// TestClosest: the names a typo may have meant, closest first, at most n;
// none when every name is far.
func TestClosest(t *testing.T) {
	names := []string{"orders", "orders-eu", "orders-us", "payments", "shardpipe"}
	tests := []struct {
		in   string
		n    int
		want []string
	}{
		{"ordres", 3, []string{"orders"}},
		{"orders-ux", 3, []string{"orders-us", "orders-eu", "orders"}},
		{"orders-ux", 1, []string{"orders-us"}},
		{"orders", 3, []string{"orders-eu", "orders-us"}}, // itself left out; a prefix of the others
		{"shardpip", 3, []string{"shardpipe"}},
		{"zzzzzzzz", 3, []string{}},
	}
	for _, tt := range tests {
		if got := Closest(tt.in, names, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("Closest(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
