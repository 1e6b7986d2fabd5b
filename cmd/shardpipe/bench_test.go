package main

import (
	"strings"
	"testing"
)

// TestBenchRejectsBadSettings: bad bench flags are a usage error naming the
// flag, before anything connects.
func TestBenchRejectsBadSettings(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"records", []string{"--records", "10"}, "--records (SHARDPIPE_RECORDS) 10: want 1000 to 100000000"},
		{"rounds", []string{"--rounds", "0"}, "--rounds (SHARDPIPE_ROUNDS) 0: want 1 to 100"},
		{"broker", []string{"--brokers", "nohost"}, `--brokers (SHARDPIPE_BROKERS) "nohost": want host:port`},
		{"redis", []string{"--redis", "redis://x:y:z"}, "--redis (SHARDPIPE_REDIS)"},
		{"topic", []string{"--bench-topic", "bad topic"}, `--bench-topic (SHARDPIPE_BENCH_TOPIC) "bad topic"`},
		{"latency", []string{"--latency-commit-interval", "0s"}, "--latency-commit-interval (SHARDPIPE_LATENCY_COMMIT_INTERVAL) 0s: want 1ms to 1h"},
		{"arguments", []string{"extra"}, "bench takes no arguments"},
		{"guard delay", []string{"--guard-delay", "2s"}, "--guard-delay (SHARDPIPE_GUARD_DELAY) 2s: want 0s to 1s"},
		{"modes", []string{"--modes", "d,x"}, `--modes (SHARDPIPE_MODES): mode "x": want a-k`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"bench", "--brokers", "127.0.0.1:1", "--redis", "127.0.0.1:1"}, tt.args...)
			code, _, stderr := call(t, nil, args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			if lines := problemLines(stderr); len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("stderr lines %q, want one containing %q", lines, tt.want)
			}
		})
	}
}
