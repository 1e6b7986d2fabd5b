package cmdtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
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

// ordersTable creates a table of orders with no unique constraint (an
// order applied twice shows as two rows) and names an inbox beside it,
// both dropped with the test.
func ordersTable(ctx context.Context, t *testing.T, pool *pgxpool.Pool) (table, inbox string) {
	t.Helper()
	table, inbox = integration.PostgresTable(t, pool), integration.PostgresTable(t, pool)
	if _, err := pool.Exec(ctx, "CREATE TABLE "+table+" (order_id text NOT NULL, customer text NOT NULL, amount_cents bigint NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return table, inbox
}

// produceSQLOrders writes orders order-000 to order-<n-1> to topic, keyed by
// their id, with the fields the tests' --sql-exec names.
func produceSQLOrders(ctx context.Context, t *testing.T, brokers []string, topic string, n int) {
	t.Helper()
	cl := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	recs := make([]*kgo.Record, n)
	for i := range recs {
		id := fmt.Sprintf("order-%03d", i)
		recs[i] = &kgo.Record{Key: []byte(id), Value: fmt.Appendf(nil, `{"order_id":%q,"customer":"c%d","amount_cents":%d}`, id, i%7, 100+i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
