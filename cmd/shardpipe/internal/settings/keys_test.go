package settings

import (
	"testing"

	"github.com/shardpipe/shardpipe/sink"
)

// TestKeysGroup: two prefixes collide when one starts with the other, a
// key and a prefix when the key starts with the prefix, two keys when
// equal; one line per pair of settings, none for keys of one setting or an
// empty value.
func TestKeysGroup(t *testing.T) {
	ledger := func(prefix, hash string) []OwnedKey {
		l := Ledger{Spec: Spec{Prefix: prefix}}
		if hash != "" {
			l.Spec.Totals = &sink.Totals{Hash: hash}
		}
		return l.Keys()
	}
	own := func(ledgerKeys []OwnedKey, dlq, checkpoints, id string) []OwnedKey {
		p := Poison{Prefix: dlq}
		return append(append(append(ledgerKeys, p.OwnKeys("l:")...), p.ProbeKey()), Replay{ID: id, CheckpointPrefix: checkpoints}.Keys()...)
	}
	tests := []struct {
		name string
		keys []OwnedKey
		want []string
	}{
		{"defaults", own(ledger("shardpipe:ledger:", "shardpipe:totals"), "shardpipe:", "shardpipe:replay:", "r"), nil},
		{"hash is the probe key", own(ledger("l:", "s:health"), "s:", "c:", "r"), []string{
			`--totals-hash (SHARDPIPE_TOTALS_HASH) "s:health" (the totals hash s:health) collides with --dlq-prefix (SHARDPIPE_DLQ_PREFIX) "s:" (the readiness probe's key s:health)`}},
		{"hash inside the ledger", own(ledger("l:", "l:evil"), "s:", "c:", "r"), []string{
			`--ledger-prefix (SHARDPIPE_LEDGER_PREFIX) "l:" (every ledger key l:...) collides with --totals-hash (SHARDPIPE_TOTALS_HASH) "l:evil"`}},
		{"hash the ledger prefix itself", own(ledger("l:", "l:"), "s:", "c:", "r"), []string{"--ledger-prefix (SHARDPIPE_LEDGER_PREFIX) \"l:\""}},
		{"hash starts the ledger prefix: apart", own(ledger("l:x:", "l:"), "s:", "c:", "r"), nil},
		{"ledger prefix holds every other key", own(ledger("s", "t"), "s:", "s:replay:", "r"), []string{
			"collides with --dlq-prefix", "collides with --checkpoint-prefix"}},
		{"checkpoints of another id: apart", own(ledger("c:other:", ""), "s:", "c:", "r"), nil},
		{"checkpoints of this id", own(ledger("c:r:", ""), "s:", "c:", "r"), []string{"collides with --checkpoint-prefix (SHARDPIPE_CHECKPOINT_PREFIX) \"c:\" (replay r's checkpoints and plan c:r:...)"}},
		{"fence keys on Redis Cluster", own(ledger("l:", "s:fence{x}"), "s:", "c:", "r"), []string{"(the durability fence keys s:fence...)"}},
		{"empty values are their groups' problem", own(ledger("", "t"), "", "", "r"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := tt.keys
			checkProblems(t, []string{tt.name}, load(t, KeysGroup(func() []OwnedKey { return keys })), tt.want...)
		})
	}
}
