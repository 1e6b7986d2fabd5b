package settings

import (
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/sink"
)

// TestReconcileTotals: a ledger whose manifest says totals takes the
// effect when --effect is not given, and a totals setting that is given
// is checked against the manifest's, with the value given in the line,
// not dropped because the effect was taken.
func TestReconcileTotals(t *testing.T) {
	stored := sink.Manifest{Effect: "totals", KeySpace: "shared", TotalsHash: "app:totals", TotalsGroupField: "customer_id", TotalsAmountField: "amount_cents"}
	defaults := sink.Totals{Hash: "shardpipe:totals", GroupField: "customer_id", AmountField: "amount_cents"}
	other := defaults
	other.Hash = "app:other"
	same := defaults
	same.Hash = "app:totals"
	for _, tc := range []struct {
		name    string
		l       Ledger
		problem string // "": none, the manifest's totals taken
	}{
		{"nothing given", Ledger{totals: defaults}, ""},
		{"the same hash given", Ledger{totals: same, Given: LedgerGiven{TotalsHash: true}}, ""},
		{"another hash given", Ledger{totals: other, Given: LedgerGiven{TotalsHash: true}}, `--totals-hash (SHARDPIPE_TOTALS_HASH) "app:other": the ledger under`},
		{"another hash with --effect totals", Ledger{totals: other, Spec: Spec{Totals: &other}, Given: LedgerGiven{Effect: true, TotalsHash: true}}, `"app:other"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, _ := tc.l.Reconcile(stored)
			if tc.problem == "" {
				if len(problems) > 0 || tc.l.Spec.Totals == nil || *tc.l.Spec.Totals != (sink.Totals{Hash: "app:totals", GroupField: "customer_id", AmountField: "amount_cents"}) {
					t.Fatalf("problems %q, totals %+v; want none and the manifest's", problems, tc.l.Spec.Totals)
				}
				return
			}
			if len(problems) != 1 || !strings.Contains(problems[0], tc.problem) || !strings.Contains(problems[0], `was made with "app:totals"`) {
				t.Fatalf("problems %q, want one naming %s and the stored hash", problems, tc.problem)
			}
		})
	}
}
