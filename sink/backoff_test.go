package sink_test

import (
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// TestBackoff: the one backoff type of the module. Ceiling doubles from
// Initial and stops at Max (the pipeline waits it exactly: its retries of a
// batch, a commit and a dead-letter write, 100ms to 5s, and of a poison
// record, 100ms to 2s); Delay draws between half and all of it (the sinks'
// Redis retries).
func TestBackoff(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		b    sink.Backoff
		want []time.Duration // Ceiling(1), Ceiling(2), ...
	}{
		{sink.Backoff{Initial: 100 * ms, Max: 5 * time.Second},
			[]time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3200 * ms, 5 * time.Second, 5 * time.Second}},
		{sink.Backoff{Initial: 100 * ms, Max: 2 * time.Second}, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 2 * time.Second}},
		{sink.Backoff{Initial: 50 * ms, Max: 50 * ms}, []time.Duration{50 * ms, 50 * ms}},
	} {
		for i, want := range tt.want {
			n := i + 1
			if got := tt.b.Ceiling(n); got != want {
				t.Errorf("%+v: Ceiling(%d) = %v, want %v", tt.b, n, got, want)
			}
			for range 20 {
				if d := tt.b.Delay(n); d < want/2 || d > want {
					t.Errorf("%+v: Delay(%d) = %v, want within [%v, %v]", tt.b, n, d, want/2, want)
				}
			}
		}
	}
	if got := (sink.Backoff{Initial: 100 * ms, Max: 5 * time.Second}).Ceiling(1 << 30); got != 5*time.Second {
		t.Errorf("Ceiling of a huge retry = %v, want the cap", got)
	}
}
