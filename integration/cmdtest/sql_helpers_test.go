package cmdtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// sqlTally is what an --effect sql test counts: the rows of its orders
// table (which has no unique constraint, so an order applied twice shows
// as two rows), the distinct orders among them, and the inbox's keys.
type sqlTally struct{ rows, distinct, inbox int }

// countSQL reads the tally of table (its order_id column) and inbox.
func countSQL(ctx context.Context, t *testing.T, pool *pgxpool.Pool, table, inbox string) sqlTally {
	t.Helper()
	var n sqlTally
	if err := pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT order_id) FROM "+table).Scan(&n.rows, &n.distinct); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+inbox).Scan(&n.inbox); err != nil {
		t.Fatal(err)
	}
	return n
}
