package sink

import (
	"context"
	"testing"
)

// TestRedelivered: a record whose key's claim names the record itself
// (topic, partition, offset) under another term of its group is
// Redelivered, not Suppressed: the accounting can then tell "this record's
// effect landed, under that term" (a crash or a lost reply before the commit
// past it) from "another record with this key landed it" and from "another
// group (a replay) met the record". In record, totals and guard mode.
func TestRedelivered(t *testing.T) {
	ctx := context.Background()
	first := order(0, 1, "o1", "c", 1)
	first.Member = "m-1"
	again := first
	again.Epoch, again.Member = 2, "m-2"
	resend := order(0, 9, "o1", "c", 1)
	resend.Epoch, resend.Member = 2, "m-2"
	type step func(r Record) Result
	for _, mode := range []string{"record", "totals", "guard"} {
		t.Run(mode, func(t *testing.T) {
			_, c := newRedis(t)
			var apply step
			switch mode {
			case "guard":
				g := newGuard(t, c)
				apply = func(r Record) Result {
					out, err := g.Do(ctx, &r, func(context.Context, string) error { return nil })
					return Result{Outcome: out, Err: err}
				}
			default:
				var opts []LedgerOpt
				if mode == "totals" {
					opts = append(opts, WithEffect(Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}))
				}
				l, err := NewLedger(c, opts...)
				if err != nil {
					t.Fatal(err)
				}
				apply = func(r Record) Result {
					rs, err := l.Apply(ctx, []Record{r})
					if err != nil {
						return Result{Err: err}
					}
					return rs[0]
				}
			}
			if res := apply(first); res.Err != nil || res.Outcome != Applied {
				t.Fatalf("first = %+v", res)
			}
			res := apply(again)
			if res.Err != nil || res.Outcome != Redelivered {
				t.Errorf("the same record under another term = %+v, want redelivered", res)
			}
			otherGroup := again
			otherGroup.Group = "replay:fix-1"
			if res := apply(otherGroup); res.Err != nil || res.Outcome != Suppressed {
				t.Errorf("the same record read by another group = %+v, want suppressed", res)
			}
			if res := apply(resend); res.Err != nil || res.Outcome != Suppressed {
				t.Errorf("another record with the key = %+v, want suppressed", res)
			}
		})
	}
}
