package settings

import (
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/opshttp"
)

// OwnedKey is a Redis key, or the prefix of keys, that a command writes,
// and the setting it comes from: admin's, with Setting naming the flag and
// its variable (ref), so the command and a program's admin.Prepare compare
// keys the same way.
type OwnedKey = admin.OwnedKey

// KeysGroup checks, once the groups before it loaded, that no two of the
// keys keys returns collide (OwnedKey): one line per pair of settings whose
// keys do (their first colliding keys), naming both. Keys of one flag are not compared (they are apart by
// construction), nor an empty value (its own group reports it). It has no
// flags; it costs a comparison per pair.
func KeysGroup(keys func() []OwnedKey) cliflags.Group {
	return cliflags.NewGroup(func(_ *cli.Command, bad *cliflags.Problems) {
		for _, c := range admin.Collisions(keys()) {
			bad.Addf("%s collides with %s: shardpipe would write one over the other, or a record's business key could name it; give them keys apart", c[0], c[1])
		}
	})
}

// Keys are the ledger's keys: every ledger entry (guard claims too) under
// its prefix, and with --effect totals the totals hash.
func (l Ledger) Keys() []OwnedKey {
	ks := []OwnedKey{{Setting: ref(FlagLedgerPrefix), Value: l.Spec.Prefix, What: "every ledger key", Key: l.Spec.Prefix, Prefix: true}}
	if t := l.Spec.Totals; t != nil {
		ks = append(ks, OwnedKey{Setting: ref(fTotalsHash), Value: t.Hash, What: "the totals hash", Key: t.Hash})
	}
	return ks
}

// OwnKeys are the keys under p's prefix that run and replay write
// (admin.OwnKeys): the dead-letter markers, the durability fence (on Redis
// Cluster one per primary, the key followed by a {hash tag}), the manifest
// of the ledger under ledgerPrefix, written once before the first record,
// and the commit marks.
func (p Poison) OwnKeys(ledgerPrefix string) []OwnedKey {
	return admin.OwnKeys(ref(fDLQPrefix), p.Prefix, ledgerPrefix, "")
}

// ProbeKey is the key each readiness probe of run writes, under p's prefix.
func (p Poison) ProbeKey() OwnedKey {
	return OwnedKey{Setting: ref(fDLQPrefix), Value: p.Prefix, What: "the readiness probe's key", Key: opshttp.HealthKey(p.Prefix)}
}

// Keys are replay's checkpoints and stored plan for r's id: under
// prefix + id + ":".
func (r Replay) Keys() []OwnedKey {
	return []OwnedKey{{Setting: ref(fCheckpointPrefix), Value: r.CheckpointPrefix, What: "replay " + r.ID + "'s checkpoints and plan",
		Key: r.CheckpointPrefix + r.ID + ":", Prefix: true}}
}
