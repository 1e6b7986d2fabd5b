package sink

import (
	"context"
	"fmt"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestBatchScriptReloaded: a Redis that lost its scripts (a restart, SCRIPT
// FLUSH, a failover to a replica that never loaded them) answers the batch's
// EVALSHA with NOSCRIPT; the Ledger loads its script and sends the batch
// again, in record mode and with an effect, and the batch lands once.
func TestBatchScriptReloaded(t *testing.T) {
	for _, effect := range []bool{false, true} {
		t.Run(fmt.Sprintf("effect=%v", effect), func(t *testing.T) {
			m := miniredis.RunT(t)
			c := redis.NewClient(&redis.Options{Addr: m.Addr()})
			t.Cleanup(func() { _ = c.Close() })
			var opts []LedgerOpt
			if effect {
				opts = append(opts, WithEffect(Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}))
			}
			l, err := NewLedger(c, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			batch := func(from int) []Record {
				rs := make([]Record, 3)
				for i := range rs {
					rs[i] = Record{Topic: "orders", Offset: int64(from + i), Key: fmt.Appendf(nil, "o%d", from+i),
						Value: []byte(`{"customer":"c","amount_cents":5}`)}
				}
				return rs
			}
			for round, from := range []int{0, 10} {
				if err := c.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				res, err := l.Apply(ctx, batch(from))
				if err != nil {
					t.Fatalf("round %d: Apply after SCRIPT FLUSH: %v", round, err)
				}
				for i, r := range res {
					if r.Err != nil || r.Outcome != Applied {
						t.Fatalf("round %d record %d: %v %v, want applied", round, i, r.Outcome, r.Err)
					}
				}
			}
			if effect {
				if got := m.HGet("totals", "c"); got != "30" {
					t.Errorf("total %s, want 30 (six orders of 5, each once)", got)
				}
			}
		})
	}
}
