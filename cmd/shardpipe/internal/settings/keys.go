package settings

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/opshttp"
	"github.com/shardpipe/shardpipe/sink"
)

// OwnedKey is a Redis key, or the prefix of keys, that a command writes,
// and the setting it comes from.
type OwnedKey struct {
	// Flag is the flag the key comes from: "totals-hash".
	Flag string
	// Value is the flag's value as given.
	Value string
	// What the key is, for messages: "the totals hash".
	What string
	// Key is the key, or the start of every key of the kind when Prefix.
	Key string
	// Prefix: Key starts keys (ledger entries, markers) rather than
	// naming one.
	Prefix bool
}

// collides reports whether a key of a can be a key of b: two prefixes
// when one starts with the other, a key and a prefix when the key starts
// with the prefix, two keys when they are equal.
func (a OwnedKey) collides(b OwnedKey) bool {
	switch {
	case a.Prefix && b.Prefix:
		return strings.HasPrefix(a.Key, b.Key) || strings.HasPrefix(b.Key, a.Key)
	case a.Prefix:
		return strings.HasPrefix(b.Key, a.Key)
	case b.Prefix:
		return strings.HasPrefix(a.Key, b.Key)
	}
	return a.Key == b.Key
}

// String names k for a problem line: the flag, its value and the key.
func (k OwnedKey) String() string {
	key := k.Key
	if k.Prefix {
		key += "..."
	}
	return fmt.Sprintf("%s %q (%s %s)", ref(k.Flag), k.Value, k.What, key)
}

// KeysGroup checks, once the groups before it loaded, that no two of the
// keys keys returns collide (OwnedKey): one line per pair of settings whose
// keys do (their first colliding keys), naming both. Keys of one flag are not compared (they are apart by
// construction), nor an empty value (its own group reports it). It has no
// flags; it costs a comparison per pair.
func KeysGroup(keys func() []OwnedKey) cliflags.Group {
	return cliflags.NewGroup(func(_ *cli.Command, bad *cliflags.Problems) {
		ks := keys()
		seen := map[[2]string]bool{}
		for i, a := range ks {
			for _, b := range ks[i+1:] {
				if pair := [2]string{a.Flag, b.Flag}; a.Flag != b.Flag && a.Value != "" && b.Value != "" && !seen[pair] && a.collides(b) {
					seen[pair] = true
					bad.Addf("%s collides with %s: shardpipe would write one over the other, or a record's business key could name it; give them keys apart", a, b)
				}
			}
		}
	})
}

// Keys are the ledger's keys: every ledger entry (guard claims too) under
// its prefix, and with --effect totals the totals hash.
func (l Ledger) Keys() []OwnedKey {
	ks := []OwnedKey{{Flag: FlagLedgerPrefix, Value: l.Spec.Prefix, What: "every ledger key", Key: l.Spec.Prefix, Prefix: true}}
	if t := l.Spec.Totals; t != nil {
		ks = append(ks, OwnedKey{Flag: fTotalsHash, Value: t.Hash, What: "the totals hash", Key: t.Hash})
	}
	return ks
}

// Keys are the keys under p's prefix that run and replay write: the
// dead-letter markers and the durability fence (on Redis Cluster one per
// primary, the key followed by a {hash tag}).
func (p Poison) Keys() []OwnedKey {
	return []OwnedKey{
		{Flag: fDLQPrefix, Value: p.Prefix, What: "the dead-letter markers", Key: p.Prefix + "dlq:", Prefix: true},
		{Flag: fDLQPrefix, Value: p.Prefix, What: "the durability fence keys", Key: FenceKey(p.Prefix), Prefix: true},
	}
}

// ManifestKey is the key of the manifest of the ledger under
// ledgerPrefix (sink.ManifestKey), among p's keys: run and replay write it
// once, before the first record.
func (p Poison) ManifestKey(ledgerPrefix string) OwnedKey {
	return OwnedKey{Flag: fDLQPrefix, Value: p.Prefix, What: "the ledger's manifest", Key: sink.ManifestKey(p.Prefix, ledgerPrefix)}
}

// ProbeKey is the key each readiness probe of run writes, under p's prefix.
func (p Poison) ProbeKey() OwnedKey {
	return OwnedKey{Flag: fDLQPrefix, Value: p.Prefix, What: "the readiness probe's key", Key: opshttp.HealthKey(p.Prefix)}
}

// Keys are replay's checkpoints and stored plan for r's id: under
// prefix + id + ":".
func (r Replay) Keys() []OwnedKey {
	return []OwnedKey{{Flag: fCheckpointPrefix, Value: r.CheckpointPrefix, What: "replay " + r.ID + "'s checkpoints and plan",
		Key: r.CheckpointPrefix + r.ID + ":", Prefix: true}}
}
