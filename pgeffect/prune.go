package pgeffect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Prune deletes at most batch inbox rows recorded before cutoff (their
// applied_at), oldest first, and returns how many it deleted: one
// statement, one round trip, a bounded amount of work however large the
// inbox. A key whose row is gone is applied again if its record is read
// again with its Redis claim gone too (expired, or a replay past the
// ledger's TTL), so cutoff must lie before every record a consumer or a
// replay may still read: keep rows at least as long as the topic's
// retention (see Pruner).
func (e *Effect) Prune(ctx context.Context, cutoff time.Time, batch int) (int64, error) {
	if batch <= 0 {
		return 0, errors.New("pgeffect: Prune: batch must be positive")
	}
	tag, err := e.db.Exec(ctx, "DELETE FROM "+e.table+" WHERE key IN (SELECT key FROM "+e.table+
		" WHERE applied_at < $1 ORDER BY applied_at LIMIT $2)", cutoff, batch)
	if err != nil {
		return 0, fmt.Errorf("pgeffect: pruning inbox %s before %s: %w", e.table, cutoff.Format(time.RFC3339), err)
	}
	return tag.RowsAffected(), nil
}

// Pruner prunes an Effect's inbox in the background at a bounded rate:
// every Every it deletes the rows older than Keep, Batch at a time, at most
// Batch per Every (so at most Batch/Every rows a second, whatever the
// backlog), until a batch comes back short. Keep must be at least the
// topic's retention (plus the longest a replay of it may run), or a record
// still readable could find its inbox row gone and apply again once its
// Redis claim is gone too.
type Pruner struct {
	Effect *Effect
	Keep   time.Duration // rows recorded longer ago than this go
	Every  time.Duration // between batches (default one second)
	Batch  int           // rows per statement (default 1000)
	Logger *slog.Logger  // where failures and progress go; nil: slog.Default()
}

// Run prunes until ctx ends; it returns ctx's error. A failed statement
// (PostgreSQL down, a lock timeout) is logged and tried again at the next
// tick: pruning never stops the pipeline.
func (p Pruner) Run(ctx context.Context) error {
	if p.Keep <= 0 {
		return errors.New("pgeffect: Pruner: Keep must be positive")
	}
	every, batch, log := p.Every, p.Batch, p.Logger
	if every <= 0 {
		every = time.Second
	}
	if batch <= 0 {
		batch = 1000
	}
	if log == nil {
		log = slog.Default()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var total int64
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		n, err := p.Effect.Prune(ctx, time.Now().Add(-p.Keep), batch)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("pruning the inbox failed; trying again", "inbox", p.Effect.table, "err", err)
		case n > 0:
			total += n
			log.Debug("pruned inbox rows", "inbox", p.Effect.table, "deleted", n, "deleted_total", total, "keep", p.Keep)
		}
	}
}
