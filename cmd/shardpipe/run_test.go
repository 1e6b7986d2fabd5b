package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// call runs the command line and returns the exit code, stdout and stderr.
func call(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := execute(ctx, append([]string{"shardpipe"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// problemLines returns stderr's "shardpipe: " lines without the usage hint.
func problemLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, "shardpipe: see ") || !strings.HasPrefix(l, "shardpipe: ") {
			continue // the usage hint, a log line
		}
		out = append(out, l)
	}
	return out
}

// TestRunRejectsBadSettings: each invalid flag or environment value gives
// exit 2 and exactly one line naming it, before anything connects (the
// brokers and Redis named here do not exist).
func TestRunRejectsBadSettings(t *testing.T) {
	base := []string{"run", "--brokers", "127.0.0.1:1", "--redis", "127.0.0.1:1", "--topic", "orders"}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string // substring of the one problem line
	}{
		{"no topic", []string{"run"}, nil, "--topic (SHARDPIPE_TOPIC): no topic given"},
		{"bad topic", []string{"--topic", "or ders"}, nil, `--topic (SHARDPIPE_TOPIC) "or ders": character ' ' not allowed`},
		{"broker without port", []string{"--brokers", "kafka"}, nil, `--brokers (SHARDPIPE_BROKERS) "kafka": want host:port`},
		{"broker bad port", []string{"--brokers", "kafka:99999"}, nil, `port "99999" is not a number from 1 to 65535`},
		{"empty group", []string{"--group", " "}, nil, "--group (SHARDPIPE_GROUP): empty"},
		{"redis bad address", []string{"--redis", "redis"}, nil, `--redis (SHARDPIPE_REDIS) "redis": address "redis": want host:port`},
		{"redis bad url", []string{"--redis", "http://x:1"}, nil, `--redis (SHARDPIPE_REDIS) "http://x:1": the Redis URL's scheme: want redis:// or rediss://`},
		{"redis empty list", []string{"--redis", ","}, nil, `--redis (SHARDPIPE_REDIS) ",": no address in the list`},
		{"redis unknown url option", []string{"--redis", "redis://127.0.0.1:1/0?timeout=1s"}, nil, `--redis (SHARDPIPE_REDIS) "redis://127.0.0.1:1/0?timeout=xxxxx": the Redis URL: unexpected option: timeout`},
		{"empty prefix", []string{"--ledger-prefix", ""}, nil, "--ledger-prefix (SHARDPIPE_LEDGER_PREFIX): empty"},
		{"ttl zero", []string{"--ttl", "0s"}, nil, "--ttl (SHARDPIPE_TTL) 0s: want 1ms to 87600h"},
		{"ttl negative", []string{"--ttl", "-1h"}, nil, "--ttl (SHARDPIPE_TTL) -1h0m0s: want 1ms to 87600h"},
		{"key-from", []string{"--key-from", "value"}, nil, `--key-from (SHARDPIPE_KEY_FROM) "value": want key, header:NAME or json:FIELD`},
		{"key-from empty json", []string{"--key-from", "json:"}, nil, `--key-from (SHARDPIPE_KEY_FROM) "json:"`},
		{"effect", []string{"--effect", "sum"}, nil, `--effect (SHARDPIPE_EFFECT) "sum": want none, totals, http or sql`},
		{"http without url", []string{"--effect", "http"}, nil, "--http-url (SHARDPIPE_HTTP_URL): empty; --effect http needs the URL"},
		{"http relative url", []string{"--effect", "http", "--http-url", "/effects"}, nil, `--http-url (SHARDPIPE_HTTP_URL) "/effects": want an absolute http:// or https:// URL with a host`},
		{"http other scheme", []string{"--effect", "http", "--http-url", "ftp://u:secret@x/e"}, nil, `"ftp://u:xxxxx@x/e": want an absolute http://`},
		{"http bad url", []string{"--effect", "http", "--http-url", "http://x:port/"}, nil, "--http-url (SHARDPIPE_HTTP_URL): not a valid URL"},
		{"http timeout zero", []string{"--effect", "http", "--http-url", "http://x/", "--http-timeout", "0s"}, nil, "--http-timeout (SHARDPIPE_HTTP_TIMEOUT) 0s: want 1ms to 29s (below the guard lease 30s"},
		{"http timeout past the lease", []string{"--effect", "http", "--http-url", "http://x/", "--http-timeout", "30s"}, nil, "--http-timeout (SHARDPIPE_HTTP_TIMEOUT) 30s: want 1ms to 29s"},
		{"sql without url", []string{"--effect", "sql", "--sql-exec", "SELECT 1"}, nil, "--sql-url (SHARDPIPE_SQL_URL): empty; --effect sql needs the database URL"},
		{"sql url with password", []string{"--effect", "sql", "--sql-exec", "SELECT 1", "--sql-url", "postgres://app:hunter2@db:5432/orders"}, nil,
			`--sql-url (SHARDPIPE_SQL_URL) "postgres://app:xxxxx@db:5432/orders": carries a password; give it with --sql-password-file (SHARDPIPE_SQL_PASSWORD_FILE) or SHARDPIPE_SQL_PASSWORD instead`},
		{"sql url password parameter", []string{"--effect", "sql", "--sql-exec", "SELECT 1", "--sql-url", "postgres://db/orders?password=hunter2"}, nil, "carries a password"},
		{"sql other scheme", []string{"--effect", "sql", "--sql-exec", "SELECT 1", "--sql-url", "mysql://db/orders"}, nil, `--sql-url (SHARDPIPE_SQL_URL) "mysql://db/orders": want a postgres:// URL with a host`},
		{"sql without statement", []string{"--effect", "sql", "--sql-url", "postgres://app@db/orders"}, nil, "--sql-exec (SHARDPIPE_SQL_EXEC): pgeffect: empty statement"},
		{"sql password file missing", []string{"--effect", "sql", "--sql-exec", "SELECT 1", "--sql-url", "postgres://app@db/orders", "--sql-password-file", "/nonexistent/pw"}, nil, "--sql-password-file (SHARDPIPE_SQL_PASSWORD_FILE): "},
		{"totals empty hash", []string{"--effect", "totals", "--totals-hash", ""}, nil, "--totals-hash (SHARDPIPE_TOTALS_HASH): empty; --effect totals needs it"},
		{"totals cluster untagged", []string{"--effect", "totals", "--redis", "127.0.0.1:1,127.0.0.1:2"}, nil, "on Redis Cluster both need the same {hash tag}"},
		{"commit-every negative", []string{"--commit-every", "-1"}, nil, "--commit-every (SHARDPIPE_COMMIT_EVERY) -1: want 0 to 1000000 (0: off)"},
		{"commit-interval negative", []string{"--commit-interval", "-1s"}, nil, "--commit-interval (SHARDPIPE_COMMIT_INTERVAL) -1s: want 0s to 24h (0: off)"},
		{"no commit trigger", []string{"--commit-every", "0", "--commit-interval", "0"}, nil, "are both 0"},
		{"max-batch", []string{"--max-batch", "0"}, nil, "--max-batch (SHARDPIPE_MAX_BATCH) 0: want 1 to 100000"},
		{"max-uncommitted negative", []string{"--max-uncommitted", "-1"}, nil, "--max-uncommitted (SHARDPIPE_MAX_UNCOMMITTED) -1: want 0 to 10000000 (0: the default)"},
		{"max-uncommitted below commit-every", []string{"--commit-every", "100", "--max-uncommitted", "50"}, nil,
			"--max-uncommitted (SHARDPIPE_MAX_UNCOMMITTED) 50 is below --commit-every (SHARDPIPE_COMMIT_EVERY) 100"},
		{"group-protocol", []string{"--group-protocol", "eager"}, nil, `--group-protocol (SHARDPIPE_GROUP_PROTOCOL) "eager": want classic or consumer`},
		{"start", []string{"--start", "beginning"}, nil, `--start (SHARDPIPE_START) "beginning": want earliest or latest`},
		{"on-poison", []string{"--on-poison", "skip"}, nil, `--on-poison (SHARDPIPE_ON_POISON) "skip": want dlq or stop`},
		{"dlq-topic bad name", []string{"--dlq-topic", "dead letters"}, nil, `--dlq-topic (SHARDPIPE_DLQ_TOPIC) "dead letters": character ' ' not allowed`},
		{"dlq-topic consumed", []string{"--dlq-topic", "orders"}, nil, `--dlq-topic (SHARDPIPE_DLQ_TOPIC) "orders": also consumed`},
		{"poison-attempts zero", []string{"--poison-attempts", "0"}, nil, "--poison-attempts (SHARDPIPE_POISON_ATTEMPTS) 0: want 1 to 100"},
		{"dlq markers inside the ledger", []string{"--ledger-prefix", "app:", "--dlq-prefix", "app:"}, nil,
			`--ledger-prefix (SHARDPIPE_LEDGER_PREFIX) "app:" (every ledger key app:...) collides with --dlq-prefix (SHARDPIPE_DLQ_PREFIX) "app:" (the dead-letter markers app:dlq:...)`},
		{"fence key inside the ledger", []string{"--ledger-prefix", "app:fen", "--dlq-prefix", "app:"}, nil,
			`--ledger-prefix (SHARDPIPE_LEDGER_PREFIX) "app:fen" (every ledger key app:fen...) collides with --dlq-prefix (SHARDPIPE_DLQ_PREFIX) "app:" (the durability fence keys app:fence...)`},
		{"instance-id empty", []string{"--instance-id", " "}, nil, `--instance-id (SHARDPIPE_INSTANCE_ID) " ": empty; give each process its own ID, or leave the flag out`},
		{"instance-id bad character", []string{"--instance-id", "pod/1"}, nil, `--instance-id (SHARDPIPE_INSTANCE_ID) "pod/1": character '/' not allowed`},
		{"readiness key inside the ledger", []string{"--ledger-prefix", "app:hea", "--dlq-prefix", "app:"}, nil,
			`--ledger-prefix (SHARDPIPE_LEDGER_PREFIX) "app:hea" (every ledger key app:hea...) collides with --dlq-prefix (SHARDPIPE_DLQ_PREFIX) "app:" (the readiness probe's key app:health)`},
		{"dlq-window too large to allocate", []string{"--dlq-window", "9223372036854775807"}, nil, "--dlq-window (SHARDPIPE_DLQ_WINDOW) 9223372036854775807: want 1 to 100000"},
		{"dlq-max-share NaN", []string{"--dlq-max-share", "NaN"}, nil, "--dlq-max-share (SHARDPIPE_DLQ_MAX_SHARE) NaN: want 0 to 1"},
		{"redis pool size negative", []string{"--redis", "redis://127.0.0.1:1?pool_size=-5"}, nil, "option pool_size: want 0 to 10000"},
		{"redis pool size too large", []string{"--redis", "redis://127.0.0.1:1?pool_size=100000000"}, nil, "option pool_size: want 0 to 10000"},
		{"redis-replicas", []string{"--redis-replicas", "-1"}, nil, "--redis-replicas (SHARDPIPE_REDIS_REPLICAS) -1: want 0 to 100"},
		{"key-space", []string{"--key-space", "topic"}, nil, `--key-space (SHARDPIPE_KEY_SPACE) "topic": want shared or per-topic`},
		{"env on-poison", nil, map[string]string{"SHARDPIPE_ON_POISON": "drop"}, `--on-poison (SHARDPIPE_ON_POISON) "drop": want dlq or stop`},
		{"session-timeout", []string{"--session-timeout", "0s"}, nil, "--session-timeout (SHARDPIPE_SESSION_TIMEOUT) 0s: want 1ms to 1h"},
		{"shutdown-timeout", []string{"--shutdown-timeout", "0s"}, nil, "--shutdown-timeout (SHARDPIPE_SHUTDOWN_TIMEOUT) 0s: want 1ms to 1h"},
		{"connect-timeout", []string{"--connect-timeout", "-2s"}, nil, "--connect-timeout (SHARDPIPE_CONNECT_TIMEOUT) -2s: want 1ms to 1h"},
		{"report-interval", []string{"--report-interval", "-1s"}, nil, "--report-interval (SHARDPIPE_REPORT_INTERVAL) -1s: want 0s to 24h (0: off)"},
		{"metrics-addr", []string{"--metrics-addr", "9464"}, nil, `--metrics-addr (SHARDPIPE_METRICS_ADDR) "9464": want host:port or :port`},
		{"metrics-addr port too big", []string{"--metrics-addr", ":99999"}, nil, `--metrics-addr (SHARDPIPE_METRICS_ADDR) ":99999": port "99999" is not a number from 0 to 65535`},
		{"metrics-addr port not a number", []string{"--metrics-addr", ":abc"}, nil, `--metrics-addr (SHARDPIPE_METRICS_ADDR) ":abc": port "abc" is not a number from 0 to 65535`},
		{"log-format", []string{"--log-format", "yaml"}, nil, `--log-format (SHARDPIPE_LOG_FORMAT) "yaml": want text or json`},
		{"log-level", []string{"--log-level", "loud"}, nil, `--log-level (SHARDPIPE_LOG_LEVEL) "loud": want debug, info, warn or error`},
		{"unparsable duration flag", []string{"--ttl", "forever"}, nil, `invalid value "forever" for flag -ttl`},
		{"unparsable int flag", []string{"--commit-every", "ten"}, nil, `invalid value "ten" for flag -commit-every`},
		{"unknown flag", []string{"--brokerz", "x:1"}, nil, "flag provided but not defined: -brokerz"},
		{"argument", []string{"extra"}, nil, `run takes no arguments, got ["extra"]`},

		{"env ttl", nil, map[string]string{"SHARDPIPE_TTL": "0s"}, "--ttl (SHARDPIPE_TTL) 0s: want 1ms to 87600h"},
		{"env unparsable ttl", nil, map[string]string{"SHARDPIPE_TTL": "soon"}, `could not parse "soon" as time.Duration value from environment variable "SHARDPIPE_TTL" for flag ttl`},
		{"env unparsable commit-every", nil, map[string]string{"SHARDPIPE_COMMIT_EVERY": "often"}, `from environment variable "SHARDPIPE_COMMIT_EVERY" for flag commit-every`},
		{"env unparsable bool", nil, map[string]string{"SHARDPIPE_REDIS_CLUSTER": "maybe"}, `environment variable "SHARDPIPE_REDIS_CLUSTER"`},
		{"env effect", nil, map[string]string{"SHARDPIPE_EFFECT": "sum"}, `--effect (SHARDPIPE_EFFECT) "sum": want none, totals, http or sql`},
		{"env group protocol", nil, map[string]string{"SHARDPIPE_GROUP_PROTOCOL": "x"}, `--group-protocol (SHARDPIPE_GROUP_PROTOCOL) "x"`},
		{"env key-from", nil, map[string]string{"SHARDPIPE_KEY_FROM": "header:"}, `--key-from (SHARDPIPE_KEY_FROM) "header:"`},
		{"env brokers", nil, map[string]string{"SHARDPIPE_BROKERS": "a:1,b"}, `--brokers (SHARDPIPE_BROKERS) "b": want host:port`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{}, base...), tt.args...)
			if tt.name == "no topic" {
				args = []string{"run", "--brokers", "127.0.0.1:1", "--redis", "127.0.0.1:1"}
			}
			env := tt.env
			if env != nil {
				// The environment replaces a default; a flag would win over it.
				args = []string{"run", "--topic", "orders"}
				env = map[string]string{"SHARDPIPE_BROKERS": "127.0.0.1:1", "SHARDPIPE_REDIS": "127.0.0.1:1"}
				for k, v := range tt.env {
					env[k] = v
				}
			}
			start := time.Now()
			code, _, stderr := call(t, env, args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			lines := problemLines(stderr)
			if len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("stderr lines %q, want one containing %q", lines, tt.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("took %v: validation must not wait for servers", d)
			}
		})
	}
}

// TestRunReportsEveryProblem: several bad settings give one line each.
func TestRunReportsEveryProblem(t *testing.T) {
	code, _, stderr := call(t, map[string]string{"SHARDPIPE_START": "middle"},
		"run", "--ttl", "0s", "--effect", "x", "--log-format", "xml")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
	lines := problemLines(stderr)
	for _, want := range []string{"--topic", "--ttl", "--effect", "SHARDPIPE_START", "--log-format"} {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, want) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d lines name %s, want 1: %q", n, want, lines)
		}
	}
	if len(lines) != 5 {
		t.Fatalf("%d problem lines, want 5: %q", len(lines), lines)
	}
}

// TestFlagBeatsEnvironment: a flag on the command line wins over its variable.
func TestFlagBeatsEnvironment(t *testing.T) {
	code, _, stderr := call(t, map[string]string{"SHARDPIPE_TTL": "0s"},
		"run", "--topic", "o", "--ttl", "1h", "--effect", "bogus")
	if code != exitUsage {
		t.Fatalf("exit %d", code)
	}
	if lines := problemLines(stderr); len(lines) != 1 || !strings.Contains(lines[0], "--effect") {
		t.Fatalf("want only the --effect problem, got %q", lines)
	}
}
