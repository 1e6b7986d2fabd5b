package main

import (
	"strings"
	"testing"
)

// TestSharedPrefixNamed: an http ledger (guard mode) started on the
// prefix of a totals ledger is refused at the first key the other ledger
// holds (exit 1), and the refusal says to give it its own --ledger-prefix.
func TestSharedPrefixNamed(t *testing.T) {
	broker, redisAddr, _ := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "3"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	common := []string{"--brokers", broker, "--redis", redisAddr, "--topic", "orders", "--redis-allow-no-persistence", "--ledger-prefix", "orders:ledger:"}
	if code, _, stderr := call(t, nil, append([]string{"replay", "--id", "r1", "--from", "0", "--effect", "totals"}, common...)...); code != 0 {
		t.Fatalf("replay --effect totals: exit %d: %s", code, stderr)
	}
	code, _, stderr := call(t, nil, append([]string{"run", "--group", "g", "--effect", "http", "--http-url", "http://127.0.0.1:1/effects"}, common...)...)
	lines := problemLines(stderr)
	if code != exitFailure || !strings.Contains(strings.Join(lines, "\n"), "not a claim of this key space") ||
		!strings.Contains(strings.Join(lines, "\n"), `use a separate --ledger-prefix (SHARDPIPE_LEDGER_PREFIX) for the http ledger, not "orders:ledger:"`) {
		t.Fatalf("run --effect http on a totals ledger's prefix: exit %d, lines %q; want exit 1 saying to use a separate --ledger-prefix", code, lines)
	}
}
