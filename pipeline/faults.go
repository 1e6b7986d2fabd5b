package pipeline

import (
	"context"
	"fmt"

	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/sink"
)

// Fault injection for tests and the integration kit's scenarios: the points
// come with the context given to Run (package internal/faults), and cost an
// atomic load per batch when none are set.

// setFaults keeps the fault points ctx carries for the workers, and checks
// them. Run calls it before any record reaches a worker.
func (r *runner) setFaults(ctx context.Context) error {
	fs := faults.From(ctx)
	if fs == nil {
		return nil
	}
	if err := fs.Worker.Validate(); err != nil {
		return fmt.Errorf("pipeline: faults: %w", err)
	}
	r.faults.Store(fs)
	return nil
}

// applyCtx is the context the sink gets: the worker's, with the run's fault
// points (a sink.Guard's) when it has any.
func (w *worker) applyCtx() context.Context {
	if fs := w.p.faults.Load(); fs != nil {
		return faults.With(w.ctx, *fs)
	}
	return w.ctx
}

// beforeApply runs the BeforeApply point, if set.
func (w *worker) beforeApply(batch []sink.Record) {
	if fs := w.p.faults.Load(); fs != nil && fs.Worker.BeforeApply != nil {
		fs.Worker.BeforeApply(w.ctx, w.part, w.epoch, batch)
	}
}

// crashPoint cuts recs, the records the worker is about to attempt (a
// batch, or one record with MaxInFlight), where the CrashAfter point, if
// set for the partition, kills the worker: after its kth attempt in all.
// True when it does after them. Both schedules ask it, so the point is the
// same in each.
func crashPoint[T any](w *worker, recs []T) ([]T, bool) {
	fs := w.p.faults.Load()
	if fs == nil {
		return recs, false
	}
	if k, ok := fs.Worker.CrashAfter[w.part]; ok && w.attempts+len(recs) >= k {
		return recs[:max(k-w.attempts, 0)], true
	}
	return recs, false
}

// crash kills the worker as a process death between its effects and its
// commit would: its term is fenced and released, nothing more is committed,
// and the Crashed point hears of it. last is the last offset attempted.
func (w *worker) crash(last int64) {
	w.fence()
	w.p.store.Release(w.part, w.epoch)
	w.p.stats.update(w.part, func(s *PartitionStats) { s.Held = false })
	if fs := w.p.faults.Load(); fs != nil && fs.Worker.Crashed != nil {
		fs.Worker.Crashed(faults.Crash{Partition: w.part, Epoch: w.epoch, Offset: last, Attempts: w.attempts,
			Err: fmt.Errorf("%s epoch %d after %d attempts: %w", w.part, w.epoch, w.attempts, faults.ErrInjectedCrash)})
	}
}
