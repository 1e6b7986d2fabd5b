package chaoscheck

import "fmt"

// SQLRows is the SQL pass's table (`run --effect sql` inserting one row per
// order into a table without a unique constraint): how many rows each
// order ID has, as the driver counted them.
type SQLRows map[string]int

// RowRuns are the SQL pass's figures: the table's rows, the orders they
// name, and the orders with more than one row.
type RowRuns struct {
	Rows, Distinct, Doubled int
}

// Line is the figures, for Report.Line.
func (r RowRuns) Line() string {
	return fmt.Sprintf("rows=%d distinct=%d doubled_rows=%d", r.Rows, r.Distinct, r.Doubled)
}

// checkRows wants exactly one row per order of the topic and none for
// anything else: an order without a row is lost, one with two or more
// doubled.
func checkRows(t *Topic, rows SQLRows, v *verdict) RowRuns {
	var out RowRuns
	for id, n := range rows {
		out.Rows += n
		out.Distinct++
		if _, ok := t.Orders[id]; !ok {
			v.fail("table row for order %q: no such order in topic %s", id, t.Name)
		}
		if n > 1 {
			out.Doubled++
			v.doubled++
			v.fail("order %q has %d rows in the table, want 1", id, n)
		}
	}
	for id, o := range t.Orders {
		if rows[id] == 0 {
			v.effectLost++
			v.fail("order %q (first at %s) has no row in the table", id, o.At)
		}
	}
	return out
}
