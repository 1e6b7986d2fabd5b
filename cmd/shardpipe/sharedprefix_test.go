package main

import (
	"strings"
	"testing"
)

// TestSharedPrefixNamed: an http ledger (guard mode) started on the
// prefix of a totals ledger is refused by its manifest (exit 2); without a
// manifest (a ledger made before them), at the first key the other ledger
// holds (exit 1); each refusal says to give it its own --ledger-prefix.
func TestSharedPrefixNamed(t *testing.T) {
	broker, redisAddr, mr := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "3"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	common := []string{"--brokers", broker, "--redis", redisAddr, "--topic", "orders", "--redis-allow-no-persistence", "--ledger-prefix", "orders:ledger:"}
	if code, _, stderr := call(t, nil, append([]string{"replay", "--id", "r1", "--from", "0", "--effect", "totals"}, common...)...); code != 0 {
		t.Fatalf("replay --effect totals: exit %d: %s", code, stderr)
	}
	httpRun := append([]string{"run", "--group", "g", "--effect", "http", "--http-url", "http://127.0.0.1:1/effects"}, common...)
	// The ledger's manifest refuses it at start (exit 2), naming the fix.
	code, _, stderr := call(t, nil, httpRun...)
	if lines := strings.Join(problemLines(stderr), "\n"); code != exitUsage || !strings.Contains(lines, `"http": the ledger under --ledger-prefix`) ||
		!strings.Contains(lines, "use a separate --ledger-prefix") {
		t.Fatalf("run --effect http on a totals ledger's manifest: exit %d, lines %q; want exit 2 naming the effects and the fix", code, lines)
	}
	// A ledger made before manifests (none to read): the first key the
	// other ledger holds refuses it.
	mr.Del("shardpipe:manifest:orders:ledger:")
	code, _, stderr = call(t, nil, httpRun...)
	lines := problemLines(stderr)
	if code != exitFailure || !strings.Contains(strings.Join(lines, "\n"), "not a claim of this key space") ||
		!strings.Contains(strings.Join(lines, "\n"), `use a separate --ledger-prefix (SHARDPIPE_LEDGER_PREFIX) for the http ledger, not "orders:ledger:"`) {
		t.Fatalf("run --effect http on a totals ledger's prefix: exit %d, lines %q; want exit 1 saying to use a separate --ledger-prefix", code, lines)
	}
}
