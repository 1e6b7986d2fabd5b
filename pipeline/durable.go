package pipeline

import (
	"context"
	"fmt"
)

// Barrier holds an offset commit back until the effects that landed before
// it are durable: a Redis that loses acknowledged ledger writes after the
// offset moved past them loses those effects for good (nothing replays
// them). sink.Durable is one (WAITAOF or WAIT on the ledger's Redis).
type Barrier interface {
	// Wait returns nil once every effect that landed before the call is
	// durable, an error when that is not known yet.
	Wait(ctx context.Context) error
}

// durable runs the barrier, if any, before the worker commits point.
func (w *worker) durable(ctx context.Context, point int64) error {
	if w.p.cfg.barrier == nil {
		return nil
	}
	if err := w.p.cfg.barrier.Wait(ctx); err != nil {
		return fmt.Errorf("%s epoch %d: effects before offset %d not yet durable, commit held back: %w",
			w.part, w.epoch, point, err)
	}
	return nil
}
