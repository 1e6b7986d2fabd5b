package integration_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/pgeffect"
	"github.com/shardpipe/shardpipe/sink"
)

// TestPgEffectEnsureInboxConcurrent: processes that start together (a
// group's members after a deploy) each create the missing inbox table at
// once; every one succeeds. PostgreSQL's CREATE TABLE IF NOT EXISTS alone
// fails all but one of such a race with a unique violation on its
// catalog, which made `run` exit 2 in make chaos's SQL pass.
func TestPgEffectEnsureInboxConcurrent(t *testing.T) {
	t.Parallel()
	pool := integration.NewPostgresPool(t, integration.Postgres(t))
	work := func(context.Context, pgx.Tx, string, *sink.Record) error { return nil }
	const starts = 8
	for round := range 5 {
		inbox := integration.PostgresTable(t, pool)
		if round > 0 {
			inbox += string(rune('a' + round))
			t.Cleanup(func() { _, _ = pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+inbox) })
		}
		var wg sync.WaitGroup
		errs := make([]error, starts)
		for i := range starts {
			eff, err := pgeffect.New(pool, inbox, work)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { errs[i] = eff.EnsureInbox(t.Context()) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: start %d of %d at once: EnsureInbox: %v", round, i+1, starts, err)
			}
		}
	}
}
