package chaoscheck

import (
	"strings"
	"testing"
)

// TestJudgeSQLRows: the SQL pass wants one row per order of the topic and
// every claim done: a missing row is lost, a second row doubled, a row of
// no order and a claim not done are violations.
func TestJudgeSQLRows(t *testing.T) {
	done := func() *Ledger {
		l := goodLedger()
		for id, c := range l.Claims {
			c.State = "done"
			l.Claims[id] = c
		}
		return l
	}
	for _, tt := range []struct {
		name          string
		rows          SQLRows
		ledger        *Ledger
		lost, doubled int
		want          string
	}{
		{"one row each", SQLRows{"a": 1, "b": 1, "c": 1}, done(), 0, 0, ""},
		{"a row missing", SQLRows{"a": 1, "c": 1}, done(), 1, 0, `order "b" (first at`},
		{"a row twice", SQLRows{"a": 2, "b": 1, "c": 1}, done(), 0, 1, `order "a" has 2 rows`},
		{"a row of no order", SQLRows{"a": 1, "b": 1, "c": 1, "zzz": 1}, done(), 0, 0, `row for order "zzz"`},
		{"a claim not done", SQLRows{"a": 1, "b": 1, "c": 1}, goodLedger(), 0, 0, `want "done"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(facts{topic: sample(), ledger: tt.ledger, dlq: goodDLQ(), haveDLQ: true,
				committed: map[int32]int64{0: 2, 1: 3}, rows: tt.rows})
			if r.Lost != tt.lost || r.Doubled != tt.doubled {
				t.Errorf("lost %d, doubled %d; want %d and %d (%v)", r.Lost, r.Doubled, tt.lost, tt.doubled, r.Violations)
			}
			got := strings.Join(r.Violations, "\n")
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("violations %q; want one containing %q", got, tt.want)
			}
			if r.Rows == nil || !strings.HasPrefix(r.Line(), "chaos sql:") {
				t.Errorf("line %q: want the sql pass's figures", r.Line())
			}
		})
	}
}
