package termui

import (
	"bytes"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/internal/orders"
)

func TestProduceSummary(t *testing.T) {
	sum := orders.Summary{Topic: "orders", Records: 11, Unique: 10, Duplicates: 1, Totals: map[string]int64{"a": 5, "b": 7}, TotalCents: 12}
	line := "produce: 11 records to orders in 1.235s: 10 unique orders, 1 duplicates; exactly-once totals: 2 customers, 12 cents\n"
	tests := []struct {
		name string
		seed uint64
		want string
	}{
		{"from a file", 0, line},
		{"synthetic", 42, "produce: seed 42\n" + line},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		s := sum
		s.Seed = tt.seed
		ProduceSummary(&b, s, 1234567*time.Microsecond)
		if b.String() != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, b.String(), tt.want)
		}
	}
}
