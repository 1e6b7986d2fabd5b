package sink

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestClaimScriptFor: the exported script is the Ledger's, and run as the
// Ledger runs it, it claims and adds once, then returns the claim.
func TestClaimScriptFor(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	tot := Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}
	l, err := NewLedger(c, WithEffect(tot))
	if err != nil {
		t.Fatal(err)
	}
	s := ClaimScriptFor(tot)
	if s.Hash() != l.script.Hash() {
		t.Fatalf("ClaimScriptFor hash %s, the Ledger's %s", s.Hash(), l.script.Hash())
	}
	ctx := context.Background()
	for i, want := range []any{int64(1), "claim-1"} {
		got, err := s.Run(ctx, c, []string{"k1", "totals"}, "claim-1", time.Minute.Milliseconds(), "c1", int64(250)).Result()
		if err != nil || got != want {
			t.Fatalf("run %d: %#v, %v; want %#v", i, got, err, want)
		}
	}
	if v := m.HGet("totals", "c1"); v != "250" {
		t.Errorf("totals c1 = %q, want 250 (added once)", v)
	}
}
