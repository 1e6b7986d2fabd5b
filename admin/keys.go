package admin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shardpipe/shardpipe/sink"
)

// OwnedKey is a Redis key, or the prefix of keys, that a pipeline writes,
// and the setting it comes from.
type OwnedKey struct {
	// Setting names where the key comes from, as the caller names it
	// ("Setup.LedgerPrefix", a flag).
	Setting string
	// Value is the setting's value as given.
	Value string
	// What the key is, for messages: "the totals hash".
	What string
	// Key is the key, or the start of every key of the kind when Prefix.
	Key string
	// Prefix: Key starts keys (ledger entries, markers) rather than
	// naming one.
	Prefix bool
}

// Collides reports whether a key of k can be a key of o: two prefixes
// when one starts with the other, a key and a prefix when the key starts
// with the prefix, two keys when they are equal.
func (k OwnedKey) Collides(o OwnedKey) bool {
	switch {
	case k.Prefix && o.Prefix:
		return strings.HasPrefix(k.Key, o.Key) || strings.HasPrefix(o.Key, k.Key)
	case k.Prefix:
		return strings.HasPrefix(o.Key, k.Key)
	case o.Prefix:
		return strings.HasPrefix(k.Key, o.Key)
	}
	return k.Key == o.Key
}

// String names k: its setting, value and key.
func (k OwnedKey) String() string {
	key := k.Key
	if k.Prefix {
		key += "..."
	}
	return fmt.Sprintf("%s %q (%s %s)", k.Setting, k.Value, k.What, key)
}

// OwnKeys are the keys a pipeline writes under own, the prefix of the
// program's own keys (Setup.Own, the command's --dlq-prefix), named as
// setting: the dead-letter markers (pipeline.DeadLetters), the durability
// fence keys when fenceKey is "" (Own + "fence"; on Redis Cluster one per
// primary, followed by a {hash tag}), the manifest of the ledger under
// ledgerPrefix (sink.ManifestKey) and the commit marks
// (sink.NewCommitMarks).
func OwnKeys(setting, own, ledgerPrefix, fenceKey string) []OwnedKey {
	ks := []OwnedKey{
		{Setting: setting, Value: own, What: "the dead-letter markers", Key: own + "dlq:", Prefix: true},
		{Setting: setting, Value: own, What: "the ledger's manifest", Key: sink.ManifestKey(own, ledgerPrefix)},
		{Setting: setting, Value: own, What: "the commit marks", Key: own + "committed:", Prefix: true},
	}
	if fenceKey == "" {
		ks = append(ks, OwnedKey{Setting: setting, Value: own, What: "the durability fence keys", Key: own + "fence", Prefix: true})
	}
	return ks
}

// Collisions returns, for each pair of settings whose keys collide
// (Collides), its first colliding pair of keys, in the order keys lists
// them. Keys of one setting are not compared (they are apart by
// construction), nor an empty value (nothing to compare). It costs a
// comparison per pair of keys.
func Collisions(keys []OwnedKey) [][2]OwnedKey {
	var out [][2]OwnedKey
	seen := map[[2]string]bool{}
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			pair := [2]string{a.Setting, b.Setting}
			if a.Setting != b.Setting && a.Value != "" && b.Value != "" && !seen[pair] && a.Collides(b) {
				seen[pair] = true
				out = append(out, [2]OwnedKey{a, b})
			}
		}
	}
	return out
}

// KeysCollideError is two keys a pipeline would write that collide.
type KeysCollideError struct {
	A, B OwnedKey
}

// Error names both keys and the fix.
func (e *KeysCollideError) Error() string {
	return fmt.Sprintf("%s collides with %s: one would be written over the other, or a record's business key could name it; give them keys apart", e.A, e.B)
}

// Unwrap returns ErrKeysCollide.
func (e *KeysCollideError) Unwrap() error { return ErrKeysCollide }

// CheckKeysApart returns a *KeysCollideError for each pair of settings
// among keys whose keys collide (Collisions), joined; nil when all are
// apart. It asks no server.
func CheckKeysApart(keys []OwnedKey) error {
	var errs []error
	for _, c := range Collisions(keys) {
		errs = append(errs, &KeysCollideError{A: c[0], B: c[1]})
	}
	return errors.Join(errs...)
}
