package main

import (
	"testing"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
)

// TestRunHTTPInFlightDefault: run --effect http runs 16 effects at once per
// partition unless --max-in-flight or SHARDPIPE_MAX_IN_FLIGHT says
// otherwise (0 keeps batches); other effects keep batches by default.
func TestRunHTTPInFlightDefault(t *testing.T) {
	http := []string{"--topic", "orders", "--effect", "http", "--http-url", "http://127.0.0.1:1/orders"}
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want int
	}{
		{"http, not given", http, "", settings.DefaultHTTPInFlight},
		{"http, flag 0", append([]string{"--max-in-flight", "0"}, http...), "", 0},
		{"http, variable 0", http, "0", 0},
		{"http, flag 4", append([]string{"--max-in-flight", "4"}, http...), "", 4},
		{"totals, not given", []string{"--topic", "orders", "--effect", "totals"}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("SHARDPIPE_MAX_IN_FLIGHT", tc.env)
			}
			rc, err := parseRun(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := rc.inflight.s.PerPartition; got != tc.want {
				t.Fatalf("--max-in-flight %d, want %d", got, tc.want)
			}
		})
	}
}
