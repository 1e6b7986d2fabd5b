package main

import (
	"strings"
	"testing"
)

// TestOwnedKeysKeptApart: each key or key prefix run and replay write in
// Redis (the ledger prefix, the totals hash, the dead-letter markers, the
// durability fence, the readiness probe's key, replay's checkpoints) that
// collides with another is exit 2 before anything connects, one line naming
// both settings; keys apart start as before.
func TestOwnedKeysKeptApart(t *testing.T) {
	run := []string{"run", "--brokers", "127.0.0.1:1", "--redis", "127.0.0.1:1", "--topic", "orders", "--connect-timeout", "100ms"}
	replay := []string{"replay", "--brokers", "127.0.0.1:1", "--redis", "127.0.0.1:1", "--topic", "orders", "--id", "r1", "--from", "0", "--connect-timeout", "100ms"}
	totals := func(hash string) []string { return []string{"--effect", "totals", "--totals-hash", hash} }
	const (
		ledger     = "--ledger-prefix (SHARDPIPE_LEDGER_PREFIX)"
		hash       = "--totals-hash (SHARDPIPE_TOTALS_HASH)"
		dlq        = "--dlq-prefix (SHARDPIPE_DLQ_PREFIX)"
		checkpoint = "--checkpoint-prefix (SHARDPIPE_CHECKPOINT_PREFIX)"
	)
	tests := []struct {
		name string
		base []string
		args []string
		want []string // in the one problem line; none: no problem
	}{
		{"totals hash is the probe's key", run, totals("shardpipe:health"), []string{hash + ` "shardpipe:health"`, dlq + ` "shardpipe:"`, "readiness probe"}},
		{"totals hash inside the ledger", run, totals("shardpipe:ledger:evil"), []string{hash, ledger + ` "shardpipe:ledger:"`}},
		{"totals hash among the dead-letter markers", run, totals("shardpipe:dlq:x"), []string{hash, dlq, "dead-letter markers"}},
		{"totals hash among the commit marks", run, totals("shardpipe:committed:x"), []string{hash, dlq, "the commit marks"}},
		{"totals hash is a fence key", run, totals("shardpipe:fence"), []string{hash, dlq, "fence"}},
		{"dead-letter markers inside the ledger", run, []string{"--ledger-prefix", "app:", "--dlq-prefix", "app:"}, []string{dlq + ` "app:"`, ledger + ` "app:"`}},
		{"probe key inside the ledger", run, []string{"--ledger-prefix", "app:hea", "--dlq-prefix", "app:"}, []string{dlq, ledger, "readiness probe"}},
		{"manifest inside the ledger", run, []string{"--ledger-prefix", "shardpipe:m"}, []string{dlq, ledger + ` "shardpipe:m"`, "the ledger's manifest"}},
		{"totals hash is the manifest", run, append(totals("shardpipe:manifest:L:"), "--ledger-prefix", "L:"), []string{hash, dlq, "the ledger's manifest"}},
		{"replay manifest inside the ledger", replay, []string{"--ledger-prefix", "shardpipe:man"}, []string{dlq, ledger, "the ledger's manifest"}},
		{"totals apart", run, totals("shardpipe:totals"), nil},
		{"replay checkpoints inside the ledger", replay, []string{"--ledger-prefix", "shardpipe:replay:"}, []string{checkpoint, ledger}},
		{"replay ledger inside the checkpoints", replay, []string{"--checkpoint-prefix", "shardpipe:ledger:"}, []string{checkpoint, ledger}},
		{"replay totals hash among the checkpoints", replay, totals("shardpipe:replay:r1:orders:plan"), []string{hash, checkpoint}},
		{"replay totals hash is the fence key", replay, totals("shardpipe:fence"), []string{hash, dlq}},
		{"replay apart", replay, totals("shardpipe:totals"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{}, tt.base...), tt.args...)
			if tt.want == nil {
				args = append(args, "--log-format", "bogus") // stop at the usage check, before connecting
				tt.want = []string{"--log-format"}
			}
			code, _, stderr := call(t, nil, args...)
			lines := problemLines(stderr)
			ok := code == exitUsage && len(lines) == 1
			for _, w := range tt.want {
				ok = ok && strings.Contains(lines[0], w)
			}
			if !ok {
				t.Errorf("%q: exit %d, lines %q; want exit 2 and one line containing %q", args, code, lines, tt.want)
			}
		})
	}
}
