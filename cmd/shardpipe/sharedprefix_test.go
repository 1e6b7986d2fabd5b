package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/sink"
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

// TestSharedPrefixHint: the hint names the guard-mode ledger (http or sql,
// run's or replay's) that met a none or totals ledger's keys, and for a
// none or totals ledger says guard ledgers cannot share its prefix.
func TestSharedPrefixHint(t *testing.T) {
	bad := fmt.Errorf("orders/0@3: %w", sink.ErrBadClaim)
	for _, tt := range []struct {
		guard, want string
	}{
		{"http", `for the http ledger, not "p:"`},
		{"sql", `for the sql ledger, not "p:"`},
		{"", "an --effect http or sql ledger and a none or totals ledger cannot share a prefix"},
	} {
		lc := ledgerConfig{guardEffect: tt.guard}
		lc.l.Spec.Prefix = "p:"
		var ee *exitError
		if err := sharedPrefix("replay", bad, lc); !errors.As(err, &ee) || ee.code != exitFailure || !strings.Contains(strings.Join(ee.lines, "\n"), tt.want) {
			t.Errorf("guard %q: %v; want exit 1 naming %q", tt.guard, err, tt.want)
		}
	}
	if err := sharedPrefix("run", errors.New("other"), ledgerConfig{}); err != nil {
		t.Errorf("another error: %v, want nil", err)
	}
}
