package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
)

// errNotExact says the independent checker found a violation.
var errNotExact = errors.New("not exact")

// exact is what one verification found.
type exact struct {
	orders, unique, ledger, dlq int
}

func (e exact) String() string {
	return fmt.Sprintf("%d records, %d unique orders, %d ledger keys, totals exact, %d dead-lettered", e.orders, e.unique, e.ledger, e.dlq)
}

// verify judges the topic, the DLQ, the group's offsets, the ledger and the
// totals hash with internal/harness/chaoscheck (which shares no code with shardpipe),
// and counts the ledger's keys.
func verify(ctx context.Context, cfg chaoscheck.Config) (exact, error) {
	rep, err := chaoscheck.Verify(ctx, cfg, nil, chaoscheck.Faults{})
	if err != nil {
		return exact{}, fmt.Errorf("verifying %s: %w", cfg.Topic, err)
	}
	if len(rep.Violations) > 0 || rep.Lost > 0 || rep.Doubled > 0 {
		return exact{}, fmt.Errorf("%w: %d lost, %d doubled, violations (%d more): %v", errNotExact, rep.Lost, rep.Doubled, rep.More, rep.Violations)
	}
	rdb := chaoscheck.NewRedis(cfg.Redis)
	defer rdb.Close()
	l, err := chaoscheck.ReadLedger(ctx, rdb, cfg.LedgerPrefix, cfg.TotalsHash)
	if err != nil {
		return exact{}, fmt.Errorf("reading the ledger at %s: %w", cfg.Redis, err)
	}
	if len(l.Claims) != rep.Unique {
		return exact{}, fmt.Errorf("%w: %d ledger keys for %d unique orders", errNotExact, len(l.Claims), rep.Unique)
	}
	return exact{orders: rep.Orders, unique: rep.Unique, ledger: len(l.Claims), dlq: rep.DLQ}, nil
}
