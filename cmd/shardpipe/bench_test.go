package main

import (
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/integration"
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
		{"modes", []string{"--modes", "d,x"}, `--modes (SHARDPIPE_MODES): mode "x": want a-o`},
		{"sql modes without a database", []string{"--modes", "d,sql"}, "--modes (SHARDPIPE_MODES) names l, m or n: they need --sql-url (SHARDPIPE_SQL_URL)"},
		{"sql url with a password", []string{"--sql-url", "postgres://app:s3cret@db/shop"}, `--sql-url (SHARDPIPE_SQL_URL) "postgres://app:xxxxx@db/shop": carries a password`},
		{"sql url not postgres", []string{"--sql-url", "db:5432"}, "want a postgres:// URL with a host"},
		{"sql records", []string{"--sql-records", "0"}, "--sql-records (SHARDPIPE_SQL_RECORDS) 0: want 1 to 10000000"},
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

// TestBenchPostgresUnreachable: with --sql-url, bench checks PostgreSQL
// with the brokers and Redis before it creates a topic: a database that
// does not answer is exit 3 naming it, and nothing is measured.
func TestBenchPostgresUnreachable(t *testing.T) {
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	t.Setenv("SHARDPIPE_SQL_PASSWORD", "pw")
	code, stdout, stderr := call(t, nil, "bench", "--brokers", strings.Join(brokers, ","), "--redis", addr,
		"--bench-topic", integration.Topic(t), "--sql-url", "postgres://app@127.0.0.1:1/shop", "--modes", "sql")
	if code != exitUnavailable || stdout != "" {
		t.Fatalf("exit %d, stdout %q, want %d and nothing measured: %s", code, stdout, exitUnavailable, stderr)
	}
	if lines := problemLines(stderr); len(lines) != 1 || !strings.Contains(lines[0], "PostgreSQL at postgres://app@127.0.0.1:1/shop (password: $SHARDPIPE_SQL_PASSWORD)") {
		t.Fatalf("stderr lines %q, want one naming the database and where its password came from", lines)
	}
	if strings.Contains(stderr, "pre-fill") || strings.Contains(stderr, "measuring") {
		t.Fatalf("bench went on past the check:\n%s", stderr)
	}
}
