package sink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClaimFormat is the version of the claims a ledger holds (the JSON of
// Claim), recorded in its manifest.
const ClaimFormat = 1

// Manifest says what a ledger is: what its claims stand for, so that a
// command or program given other settings is refused before it touches a
// record (a replay without the ledger's totals effect would claim every
// key and lose its sums for good). It holds no secret: no URL, no
// password.
type Manifest struct {
	// Effect is what a claim stands for: none, totals, http, or the name
	// a program gives its own effect.
	Effect string `json:"effect"`
	// TotalsHash is the totals effect's hash; empty for other effects.
	TotalsHash string `json:"totals_hash,omitempty"`
	// TotalsGroupField is the totals effect's group field.
	TotalsGroupField string `json:"totals_group_field,omitempty"`
	// TotalsAmountField is the totals effect's amount field.
	TotalsAmountField string `json:"totals_amount_field,omitempty"`
	// KeySpace is shared (one business key space for every topic) or
	// per-topic (<prefix><topic>:<key>).
	KeySpace string `json:"key_space"`
	// Topics are the topics whose records the ledger met first.
	Topics []string `json:"topics,omitempty"`
	// ClaimFormat is the claims' version (ClaimFormat when written).
	ClaimFormat int `json:"claim_format"`
	// CreatedAt is when the manifest was written.
	CreatedAt time.Time `json:"created_at"`
	// CreatedBy names the program and version that wrote it.
	CreatedBy string `json:"created_by"`
}

// ManifestKey is the key of the manifest of the ledger under ledgerPrefix,
// among a program's own keys under own (the command's --dlq-prefix): kept
// out of the ledger's key space, so no business key can name it.
func ManifestKey(own, ledgerPrefix string) string {
	return fmt.Sprintf("%smanifest:%s", own, ledgerPrefix)
}

// ReadManifest returns the manifest at key; false when there is none. A
// key that holds something else is an error wrapping ErrMisconfigured.
func ReadManifest(ctx context.Context, rdb redis.UniversalClient, key string) (Manifest, bool, error) {
	v, err := rdb.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return Manifest{}, false, nil
	}
	if err != nil {
		return Manifest{}, false, fmt.Errorf("sink: reading the ledger manifest %s: %w", key, err)
	}
	var m Manifest
	if err := json.Unmarshal(v, &m); err != nil || m.Effect == "" {
		return Manifest{}, false, fmt.Errorf("sink: %s holds no ledger manifest (%d bytes): %w", key, len(v), ErrMisconfigured)
	}
	return m, true, nil
}

// WriteManifest writes m at key unless a manifest is there already
// (replace: whatever is there); it reports whether it wrote. One round
// trip; the manifest has no TTL.
func WriteManifest(ctx context.Context, rdb redis.UniversalClient, key string, m Manifest, replace bool) (bool, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return false, fmt.Errorf("sink: encoding the ledger manifest: %w", err)
	}
	if replace {
		err = rdb.Set(ctx, key, b, 0).Err()
		if err != nil {
			return false, fmt.Errorf("sink: writing the ledger manifest %s: %w", key, err)
		}
		return true, nil
	}
	ok, err := rdb.SetNX(ctx, key, b, 0).Result()
	if err != nil {
		return false, fmt.Errorf("sink: writing the ledger manifest %s: %w", key, err)
	}
	return ok, nil
}

// CheckFormat returns nil when this package reads the claims m records
// (m.ClaimFormat at most ClaimFormat), else an error wrapping
// ErrClaimFormat naming both formats and the manifest's writer. Every
// program checks it before it applies a record through the ledger; it
// costs nothing.
func (m Manifest) CheckFormat() error {
	if m.ClaimFormat > ClaimFormat {
		return fmt.Errorf("sink: the ledger holds claims of format %d, written by %s; this build reads format %d: %w",
			m.ClaimFormat, m.CreatedBy, ClaimFormat, ErrClaimFormat)
	}
	return nil
}

// ManifestField is one setting of a Manifest that two manifests disagree
// on: its name (effect, totals_hash, totals_group_field,
// totals_amount_field, key_space), the stored value and the given one.
type ManifestField struct {
	// Name is the setting's name in the manifest's JSON.
	Name string
	// Stored is the manifest's value, Given the one compared with it.
	Stored, Given string
}

// Differences returns the settings in which given differs from m, the
// stored manifest: what makes a claim mean something else. Topics,
// ClaimFormat and the creation fields are not compared (another topic may
// join a shared key space).
func (m Manifest) Differences(given Manifest) []ManifestField {
	var d []ManifestField
	for _, f := range []ManifestField{{"effect", m.Effect, given.Effect}, {"key_space", m.KeySpace, given.KeySpace},
		{"totals_hash", m.TotalsHash, given.TotalsHash}, {"totals_group_field", m.TotalsGroupField, given.TotalsGroupField},
		{"totals_amount_field", m.TotalsAmountField, given.TotalsAmountField}} {
		if f.Stored != f.Given {
			d = append(d, f)
		}
	}
	return d
}
