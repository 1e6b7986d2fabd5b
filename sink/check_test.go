package sink

import (
	"context"
	"slices"
	"testing"
)

// TestLedgerCheck: Check predicts Apply's outcomes batch by batch and writes
// nothing (the key space is the same before and after).
func TestLedgerCheck(t *testing.T) {
	ctx := context.Background()
	totals := WithEffect(Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"})
	tests := []struct {
		name  string
		opts  []LedgerOpt
		held  []Record // applied before the check
		batch []Record
		want  []string
	}{
		{
			name:  "held keys suppress, missing ones apply",
			held:  []Record{order(0, 0, "o1", "c", 1)},
			batch: []Record{withEpoch(order(0, 0, "o1", "c", 1), 2), order(0, 1, "o2", "c", 1)},
			want:  []string{"suppressed", "applied"},
		},
		{
			name:  "a repeated key in the batch is suppressed",
			batch: []Record{order(0, 0, "o1", "c", 1), order(0, 1, "o1", "c", 1), order(0, 2, "o2", "c", 1)},
			want:  []string{"applied", "suppressed", "applied"},
		},
		{
			name:  "no key and bad values are errors",
			opts:  []LedgerOpt{totals},
			batch: []Record{{Topic: "orders", Offset: 5}, {Topic: "orders", Offset: 6, Key: []byte("o9"), Value: []byte("nope")}, order(0, 7, "o3", "c", 1)},
			want:  []string{"err", "err", "applied"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, c := newRedis(t)
			l, err := NewLedger(c, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.held) > 0 {
				if _, err := l.Apply(ctx, tt.held); err != nil {
					t.Fatal(err)
				}
			}
			before := m.Keys()
			rs, err := l.Check(ctx, tt.batch)
			if err != nil {
				t.Fatal(err)
			}
			if got := outcomes(rs); !slices.Equal(got, tt.want) {
				t.Errorf("check: got %v, want %v", got, tt.want)
			}
			if after := m.Keys(); !slices.Equal(before, after) {
				t.Errorf("check wrote: keys %v before, %v after", before, after)
			}
			applied, err := l.Apply(ctx, tt.batch)
			if err != nil {
				t.Fatal(err)
			}
			// Check cannot tell whose claim holds a key: what Apply calls
			// redelivered (the same record's claim) it calls suppressed.
			got := outcomes(applied)
			for i := range got {
				if got[i] == "redelivered" {
					got[i] = "suppressed"
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("apply after check: got %v, check said %v", outcomes(applied), tt.want)
			}
		})
	}
}
