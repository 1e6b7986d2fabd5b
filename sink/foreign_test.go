package sink

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// foreignValues are values a ledger or guard key can hold that this package
// did not write for that key space: not a claim at all, a claim with no or an
// unknown state, and the other mode's claim (a Ledger and a Guard sharing a
// prefix).
func foreignValues(ownState string) map[string]string {
	vals := map[string]string{
		"not json":      "garbage",
		"no state":      `{"topic":"orders","partition":0,"offset":9,"epoch":1}`,
		"unknown state": `{"topic":"orders","partition":0,"offset":9,"epoch":1,"at":"2026-01-01T00:00:00Z","state":"bogus"}`,
	}
	if ownState == ClaimApplied {
		vals["a guard's done claim"] = `{"topic":"orders","partition":0,"offset":9,"epoch":1,"at":"2026-01-01T00:00:00Z","state":"done","owner":"x"}`
	} else {
		vals["a ledger's claim"] = `{"topic":"orders","partition":0,"offset":9,"epoch":1,"at":"2026-01-01T00:00:00Z","state":"applied"}`
	}
	return vals
}

// TestLedgerForeignValue: a ledger key that holds something other than a
// Ledger claim is a misconfiguration (another program's key space, or a
// Guard sharing the prefix), not a suppression: the record gets an error
// wrapping ErrMisconfigured and ErrBadClaim that names the key, nothing is
// written, and the other records of the batch are applied as usual.
func TestLedgerForeignValue(t *testing.T) {
	ctx := context.Background()
	for _, effect := range []bool{false, true} {
		for name, val := range foreignValues(ClaimApplied) {
			t.Run(map[bool]string{false: "record/", true: "totals/"}[effect]+name, func(t *testing.T) {
				m, c := newRedis(t)
				opts := []LedgerOpt{}
				if effect {
					opts = append(opts, WithEffect(Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}))
				}
				l, err := NewLedger(c, opts...)
				if err != nil {
					t.Fatal(err)
				}
				m.Set("shardpipe:ledger:o2", val)
				rs, err := l.Apply(ctx, []Record{order(0, 1, "o1", "c", 1), order(0, 2, "o2", "c", 5), order(0, 3, "o3", "c", 1)})
				if err != nil {
					t.Fatal(err)
				}
				if rs[0].Err != nil || rs[0].Outcome != Applied || rs[2].Err != nil || rs[2].Outcome != Applied {
					t.Errorf("the other records: %+v, %+v; want both applied", rs[0], rs[2])
				}
				err = rs[1].Err
				if !errors.Is(err, ErrMisconfigured) || !errors.Is(err, ErrBadClaim) {
					t.Fatalf("record at the foreign key: %+v; want an error wrapping ErrMisconfigured and ErrBadClaim", rs[1])
				}
				if !strings.Contains(err.Error(), `"shardpipe:ledger:o2"`) {
					t.Errorf("error %q does not name the key", err)
				}
				if got, _ := m.Get("shardpipe:ledger:o2"); got != val {
					t.Errorf("the foreign value became %q", got)
				}
				if effect && m.HGet("totals", "c") != "2" {
					t.Errorf("totals c = %q, want 2 (the foreign key's record not added)", m.HGet("totals", "c"))
				}
			})
		}
	}
}

// TestGuardForeignValue: the same for a Guard: the effect does not run and
// Do fails with ErrMisconfigured and ErrBadClaim naming the key.
func TestGuardForeignValue(t *testing.T) {
	ctx := context.Background()
	for name, val := range foreignValues(ClaimDone) {
		t.Run(name, func(t *testing.T) {
			m, c := newRedis(t)
			g := newGuard(t, c)
			m.Set("shardpipe:guard:o1", val)
			var n counter
			r := order(0, 1, "o1", "c", 1)
			done := make(chan error, 1)
			go func() { _, err := g.Do(ctx, &r, n.effect); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Do did not return within 10s: it waits on the foreign value as on a live claim")
			}
			if !errors.Is(err, ErrMisconfigured) || !errors.Is(err, ErrBadClaim) {
				t.Fatalf("Do = %v; want ErrMisconfigured and ErrBadClaim", err)
			}
			if !strings.Contains(err.Error(), `"shardpipe:guard:o1"`) {
				t.Errorf("error %q does not name the key", err)
			}
			if n.n.Load() != 0 {
				t.Errorf("the effect ran %d times", n.n.Load())
			}
		})
	}
}
