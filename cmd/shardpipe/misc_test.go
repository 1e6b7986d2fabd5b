package main

import (
	"strings"
	"testing"
)

// TestDemo runs the demo as a newcomer would and checks the seed's line.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds")
	}
	for _, proto := range []string{"classic", "consumer"} {
		t.Run(proto, func(t *testing.T) {
			code, out, stderr := call(t, nil, "demo", "--group-protocol", proto)
			if code != 0 {
				t.Fatalf("demo: exit %d:\n%s\n%s", code, out, stderr)
			}
			const seed = "shard0=250 crash_attempts=37 checkpoint=30 replay=7 applied=1000 suppressed=7"
			if !strings.Contains(out, seed) {
				t.Fatalf("demo output lacks the seed line %q:\n%s", seed, out)
			}
			if !strings.Contains(out, "orders=3000 applied=3000") || !strings.Contains(out, "ledger=3000 totals_ok=true offset_decreases=0") {
				t.Fatalf("demo output lacks the rebalance result:\n%s", out)
			}
		})
	}
}

// TestVersion: version and --version print the same: the version, the Go
// version and the revision line (a revision, or why there is none).
func TestVersion(t *testing.T) {
	code, out, _ := call(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "shardpipe ") || !strings.Contains(out, "go       go1.") || !strings.Contains(out, "  revision ") {
		t.Fatalf("version: exit %d:\n%s", code, out)
	}
	code, flag, stderr := call(t, nil, "--version")
	if code != 0 || flag != out {
		t.Fatalf("--version: exit %d, stdout:\n%s\nwant what version prints:\n%s\nstderr: %s", code, flag, out, stderr)
	}
}

// TestProduceRejectsBadSettings: like run, each bad produce setting is one
// line and exit 2, before anything connects.
func TestProduceRejectsBadSettings(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no topic", nil, nil, "--topic (SHARDPIPE_TOPIC): no topic given"},
		{"count", []string{"--topic", "o", "--count", "-1"}, nil, "--count (SHARDPIPE_COUNT) -1: want 0 to 1000000000"},
		{"duplicates", []string{"--topic", "o", "--duplicates", "-0.5"}, nil, "--duplicates (SHARDPIPE_DUPLICATES) -0.5: want 0 to 10 (a ratio of --count)"},
		{"rate", []string{"--topic", "o", "--rate", "-3"}, nil, "--rate (SHARDPIPE_RATE) -3: want 0 to 10000000 (0: unlimited)"},
		{"partitions", []string{"--topic", "o", "--partitions", "-1"}, nil, "--partitions (SHARDPIPE_PARTITIONS) -1"},
		{"replication", []string{"--topic", "o", "--replication-factor", "0"}, nil, "--replication-factor (SHARDPIPE_REPLICATION_FACTOR) 0"},
		{"from and count", []string{"--topic", "o", "--from-file", "-", "--count", "5"}, nil, "--from-file (SHARDPIPE_FROM_FILE): reads orders from a file"},
		{"from missing file", []string{"--topic", "o", "--from-file", "does-not-exist.jsonl"}, nil, "--from-file (SHARDPIPE_FROM_FILE): open does-not-exist.jsonl"},
		{"env rate", []string{"--topic", "o"}, map[string]string{"SHARDPIPE_RATE": "fast"}, `environment variable "SHARDPIPE_RATE"`},
		{"env duplicates", []string{"--topic", "o"}, map[string]string{"SHARDPIPE_DUPLICATES": "11"}, "--duplicates (SHARDPIPE_DUPLICATES) 11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"produce", "--brokers", "127.0.0.1:1"}, tt.args...)
			code, _, stderr := call(t, tt.env, args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			if lines := problemLines(stderr); len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("stderr lines %q, want one containing %q", lines, tt.want)
			}
		})
	}
}

// TestUnknownCommand: a misspelt command is a usage error.
func TestUnknownCommand(t *testing.T) {
	code, _, stderr := call(t, nil, "runn")
	if code != exitUsage || !strings.Contains(stderr, `unknown command "runn"`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
