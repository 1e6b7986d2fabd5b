package chaoscheck

import (
	"fmt"
	"strings"
	"testing"
)

func order(id, cust string, cents int) []byte {
	return fmt.Appendf(nil, `{"order_id":%q,"customer":%q,"amount_cents":%d}`, id, cust, cents)
}

// sample is a two-partition topic: orders a, b, c (a re-sent) and one
// poison record, fully consumed.
func sample() *Topic {
	t := newTopic("orders")
	t.add(Pos{0, 0}, []byte("a"), order("a", "x", 100))
	t.add(Pos{0, 1}, []byte("b"), order("b", "x", 50))
	t.add(Pos{1, 0}, []byte("c"), order("c", "y", 7))
	t.add(Pos{1, 1}, []byte("a"), order("a", "x", 100))
	t.add(Pos{1, 2}, []byte("poison-1"), []byte("not json"))
	t.End = map[int32]int64{0: 2, 1: 3}
	return t
}

func goodLedger() *Ledger {
	return &Ledger{
		Claims: map[string]Claim{
			"a": {Topic: "orders", Partition: 1, Offset: 1, State: "applied"},
			"b": {Topic: "orders", Partition: 0, Offset: 1, State: "applied"},
			"c": {Topic: "orders", Partition: 1, Offset: 0, State: "applied"},
		},
		Bad:    map[string]string{},
		Totals: map[string]int64{"x": 150, "y": 7},
	}
}

func goodDLQ() []DLQEntry {
	return []DLQEntry{{Topic: "orders", Source: Pos{1, 2}, Key: []byte("poison-1"), Value: []byte("not json")}}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(l *Ledger, dlq *[]DLQEntry, committed map[int32]int64, ds *[]Decrease)
		lost, twice int
		want        string // a violation containing this; "" for none
	}{
		{name: "exactly once", edit: func(*Ledger, *[]DLQEntry, map[int32]int64, *[]Decrease) {}},
		{name: "missing ledger key", lost: 1, want: `order "b"`,
			edit: func(l *Ledger, _ *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) {
				delete(l.Claims, "b")
				l.Totals["x"] = 100
			}},
		{name: "effect applied twice", twice: 1, want: "too many",
			edit: func(l *Ledger, _ *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) { l.Totals["x"] = 250 }},
		{name: "phantom ledger key", want: `"zzz": no such order`,
			edit: func(l *Ledger, _ *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) {
				l.Claims["zzz"] = Claim{Topic: "orders", State: "applied"}
			}},
		{name: "claim names the wrong record", want: "does not hold that order",
			edit: func(l *Ledger, _ *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) {
				l.Claims["c"] = Claim{Topic: "orders", Partition: 0, Offset: 0, State: "applied"}
			}},
		{name: "poison applied", want: "poison record: it was applied",
			edit: func(l *Ledger, _ *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) {
				l.Claims["poison-1"] = Claim{Topic: "orders", Partition: 1, Offset: 2, State: "applied"}
			}},
		{name: "poison not in the DLQ", lost: 1, want: "not in the DLQ",
			edit: func(_ *Ledger, d *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) { *d = nil }},
		{name: "poison twice in the DLQ", twice: 1, want: "2 times",
			edit: func(_ *Ledger, d *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) { *d = append(*d, (*d)[0]) }},
		{name: "good order in the DLQ", want: `a good order "b"`,
			edit: func(_ *Ledger, d *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) {
				*d = append(*d, DLQEntry{Topic: "orders", Source: Pos{0, 1}})
			}},
		{name: "commit short of the end", want: "partition 1: committed offset 2, log end 3",
			edit: func(_ *Ledger, _ *[]DLQEntry, c map[int32]int64, _ *[]Decrease) { c[1] = 2 }},
		{name: "offset went backwards", want: "went back from 9 to 3",
			edit: func(_ *Ledger, _ *[]DLQEntry, _ map[int32]int64, ds *[]Decrease) {
				*ds = append(*ds, Decrease{Partition: 0, From: 9, To: 3})
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, dlq, committed := goodLedger(), goodDLQ(), map[int32]int64{0: 2, 1: 3}
			var ds []Decrease
			tc.edit(l, &dlq, committed, &ds)
			r := judge(sample(), l, dlq, true, committed, ds, Faults{})
			if r.Orders != 4 || r.Unique != 3 || r.Poison != 1 {
				t.Errorf("orders/unique/poison = %d/%d/%d, want 4/3/1", r.Orders, r.Unique, r.Poison)
			}
			if r.Lost != tc.lost || r.Doubled != tc.twice {
				t.Errorf("lost=%d doubled=%d, want %d and %d\n%s", r.Lost, r.Doubled, tc.lost, tc.twice, r)
			}
			if tc.want == "" {
				if !r.OK() {
					t.Fatalf("want no violation, got\n%s", r)
				}
				return
			}
			if r.OK() || !strings.Contains(strings.Join(r.Violations, "\n"), tc.want) {
				t.Fatalf("want a violation containing %q, got\n%s", tc.want, r)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		key, value string
		poison     string
	}{
		{"o1", `{"customer":"c","amount_cents":5}`, ""},
		{"o1", `{"customer":7,"amount_cents":-5}`, ""},
		{"", `{"customer":"c","amount_cents":5}`, "empty key"},
		{"o1", `not json`, "value is not a JSON object"},
		{"o1", `[1,2]`, "value is not a JSON object"},
		{"o1", `null`, "value is not a JSON object"},
		{"o1", `{"amount_cents":5}`, "no customer"},
		{"o1", `{"customer":"","amount_cents":5}`, "no customer"},
		{"o1", `{"customer":"c","amount_cents":"5"}`, "amount_cents is not an int64"},
		{"o1", `{"customer":"c","amount_cents":5.5}`, "amount_cents is not an int64"},
		{"o1", `{"customer":"c","amount_cents":99999999999999999999}`, "amount_cents is not an int64"},
		{"o1", `{"customer":"c"}`, "amount_cents is not an int64"},
	}
	for _, tc := range tests {
		_, got := classify([]byte(tc.key), []byte(tc.value))
		if got != tc.poison {
			t.Errorf("classify(%q, %s) = %q, want %q", tc.key, tc.value, got, tc.poison)
		}
	}
}
