package admin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/sink"
)

// TestCheckLedger runs on the real Redis: the first check writes the
// manifest; the same settings pass; another effect, totals hash or key
// space is refused with a *LedgerMismatchError naming each; replace writes
// the new settings.
func TestCheckLedger(t *testing.T) {
	ctx := context.Background()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	key := sink.ManifestKey(integration.RedisPrefix(t, rdb), "l:")
	totals := sink.Manifest{Effect: "totals", TotalsHash: "h", TotalsGroupField: "customer", TotalsAmountField: "amount_cents", KeySpace: "shared"}
	if _, written, err := admin.CheckLedger(ctx, rdb, key, totals, false); err != nil || !written {
		t.Fatalf("first check: written %v, %v; want the manifest written", written, err)
	}
	if m, written, err := admin.CheckLedger(ctx, rdb, key, totals, false); err != nil || written || m.Effect != "totals" {
		t.Fatalf("same settings: %+v, written %v, %v; want the stored manifest, nothing written", m, written, err)
	}
	for _, tc := range []struct {
		name  string
		given sink.Manifest
		field string
	}{
		{"no effect", sink.Manifest{Effect: "none", KeySpace: "shared"}, "effect"},
		{"another totals hash", func() sink.Manifest { m := totals; m.TotalsHash = "other"; return m }(), "totals_hash"},
		{"per-topic", func() sink.Manifest { m := totals; m.KeySpace = "per-topic"; return m }(), "key_space"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := admin.CheckLedger(ctx, rdb, key, tc.given, false)
			var me *admin.LedgerMismatchError
			if !errors.Is(err, admin.ErrLedgerMismatch) || !errors.As(err, &me) || len(me.Fields) == 0 || me.Fields[0].Name != tc.field {
				t.Fatalf("CheckLedger = %v, want a LedgerMismatchError naming %s first", err, tc.field)
			}
		})
	}
	none := sink.Manifest{Effect: "none", KeySpace: "shared"}
	if _, written, err := admin.CheckLedger(ctx, rdb, key, none, true); err != nil || !written {
		t.Fatalf("replace: written %v, %v", written, err)
	}
	if _, _, err := admin.CheckLedger(ctx, rdb, key, none, false); err != nil {
		t.Fatalf("after replace: %v", err)
	}
	// A ledger whose claims are of a newer format than this build reads is
	// refused even with its own settings: its claims would be misread.
	newer := none
	newer.ClaimFormat, newer.CreatedBy = sink.ClaimFormat+1, "shardpipe v9"
	if _, err := sink.WriteManifest(ctx, rdb, key, newer, true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := admin.CheckLedger(ctx, rdb, key, none, false); !errors.Is(err, sink.ErrClaimFormat) || !strings.Contains(err.Error(), "shardpipe v9") {
		t.Fatalf("CheckLedger on claims of format %d = %v, want sink.ErrClaimFormat naming the writer", newer.ClaimFormat, err)
	}
}
