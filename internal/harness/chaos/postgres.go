package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
)

// retriedEffect is the message of a consumer's log line saying an effect
// failed and waits for its retry (rate limited to one line per partition
// every 5s).
const retriedEffect = "effect failed, retrying the record; its key's later records wait, other keys go on, and the commit point stays before it"

// postgresRestart stops PostgreSQL at once while effects run (pg_ctl -m
// immediate: connections cut, COMMITs in flight unanswered), keeps it down
// for down, and starts it again (crash recovery). It is seen when a
// consumer logs a retried effect after the stop. Effects run only in a
// group that is not rebalancing: a classic group is awaited Stable (after a
// kill it waits for the dead member's session), and a consumer holding
// landed, uncommitted records (consuming now).
func (r *runner) postgresRestart(ctx context.Context, slot int, down time.Duration) error {
	if r.protocol == "classic" {
		r.awaitStable(ctx, 30*time.Second)
	}
	r.awaitHolding(ctx, r.holding(ctx, slot), 5*time.Second)
	from := map[*consumer]int64{}
	for _, c := range r.slots {
		if c != nil && !c.exited() {
			from[c] = c.logSize()
		}
	}
	r.logf("stopping postgres at once (pg_ctl -m immediate) with effects running; start again in %v", down)
	if err := r.cfg.Services.Kill(ctx, "postgres"); err != nil {
		return err
	}
	r.faults.PostgresRestarts++
	if err := sleep(ctx, down); err != nil {
		return err
	}
	if err := r.cfg.Services.Restart(ctx, "postgres"); err != nil {
		return err
	}
	r.logf("postgres back")
	for c, off := range from {
		if !c.exited() && c.waitLog(ctx, off, 5*time.Second, retriedEffect) != "" {
			r.faults.PostgresRestartsSeen++
			return nil
		}
	}
	r.noEffect("postgres restart: no consumer logged a retried effect within 5s of it")
	return nil
}

// sqlTable is the SQL pass's table of r: one row per applied order, no
// unique constraint, so a second run of an order's effect is a second row.
func (r *runner) sqlTable() string { return strings.ReplaceAll(r.topic, "-", "_") + "_orders" }

// sqlInbox is the SQL pass's inbox table.
func (r *runner) sqlInbox() string { return strings.ReplaceAll(r.topic, "-", "_") + "_inbox" }

// createSQLTable creates the pass's table on url.
func (r *runner) createSQLTable(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("chaos: postgres: %w", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE TABLE "+r.sqlTable()+" (order_id text NOT NULL, customer text NOT NULL, amount_cents bigint NOT NULL)")
	return err
}

// sqlRows counts the table's rows per order ID.
func (r *runner) sqlRows(ctx context.Context, url string) (chaoscheck.SQLRows, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("chaos: postgres: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT order_id, count(*) FROM "+r.sqlTable()+" GROUP BY order_id")
	if err != nil {
		return nil, err
	}
	out := chaoscheck.SQLRows{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}
