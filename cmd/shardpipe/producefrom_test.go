package main

import (
	"strings"
	"testing"
)

// TestProduceFromIsReplays: SHARDPIPE_FROM is replay's start; produce
// reads its file of orders from --from-file (SHARDPIPE_FROM_FILE), so an
// exported start for a replay does not stop produce from making orders.
func TestProduceFromIsReplays(t *testing.T) {
	broker, _, _ := fakes(t)
	code, _, stderr := call(t, map[string]string{"SHARDPIPE_FROM": "90m"},
		"produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "5")
	if code != exitOK {
		t.Fatalf("SHARDPIPE_FROM=90m produce --count 5: exit %d: %s", code, stderr)
	}
	code, _, stderr = call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--from", "orders.jsonl")
	if lines := problemLines(stderr); code != exitUsage || len(lines) != 1 || !strings.Contains(lines[0], "did you mean --from-file?") {
		t.Fatalf("produce --from: exit %d, lines %q; want exit 2 suggesting --from-file", code, lines)
	}
}
