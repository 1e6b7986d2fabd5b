package pipeline

import (
	"context"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// Finisher is an Applier that can finish a batch whose outcome is unknown
// without applying it again. Guarded implements it; sink.Ledger needs not
// (its claim is the effect: nothing runs before it lands).
//
// The pipeline calls Finish from a worker's exit when its term ends (the
// partition revoked or lost, the worker fenced, Close, Run's context
// ending) while its last batch's outcome is unknown (Apply failed, and the
// worker will not apply it again in this term), after the partition's
// final commit. ctx's deadline is when the pipeline stops waiting for the
// worker: the end of ShutdownTimeout when the pipeline stops, of
// RevokeTimeout (from the revoke or the loss) when the partition moves. So
// a revoke, a loss or a stop waits longer only while there is something to
// finish and the sink cannot do it (Redis down), and never past its
// timeout. ctx is canceled by Abort, which stands for a crash: then Finish
// is not called, or must stop at once.
//
// Finish must never apply an effect: it only records the outcome of
// effects that already happened in this process, so that the next owner
// does not run them again. It returns how many records it finished, how
// many it had to leave unfinished (their effects ran but their outcome is
// not recorded: the next owner may run them again), and an error naming
// those; the worker logs them per partition. A Finisher may go on past
// ctx's deadline, in the background of a pipeline that no longer waits,
// while that is bounded and still useful: Guarded does until the records'
// pending claims' leases would lapse (sink.Guard.Finish). An Applier that
// wraps another keeps the wrapped one's finishing when it is built with
// Wrap or has an Unwrap method (see Wrap); otherwise that is lost.
type Finisher interface {
	// Finish records the outcome of the effects of batch that ran in this
	// process, applying none, and returns the records finished, those left
	// unfinished and an error naming the latter.
	Finish(ctx context.Context, batch []sink.Record) (finished, left int, err error)
}

// grant lets the worker spend until by, at its exit, finishing its unknown
// batch (see Finisher): the deadline of whoever waits for it to end.
func (w *worker) grant(by time.Time) { w.finishBy.Store(by.UnixNano()) }

// finishUnknown finishes the batch whose outcome was unknown when the term
// ended, if the sink is a Finisher and the worker was granted time.
func (w *worker) finishUnknown() {
	f, ok := finisherOf(w.p.cfg.applier)
	by := w.finishBy.Load()
	if !ok || len(w.unknown) == 0 || by == 0 {
		return
	}
	w.finishing.Store(true)
	ctx, cancel := context.WithDeadline(w.halt, time.Unix(0, by))
	defer cancel()
	start := time.Now()
	finished, left, err := f.Finish(ctx, w.unknown)
	attrs := []any{"partition", w.part.String(), "epoch", w.epoch, "first_offset", w.unknown[0].Offset,
		"last_offset", w.unknown[len(w.unknown)-1].Offset, "finished", finished, "took", time.Since(start).Round(time.Millisecond)}
	switch {
	case left > 0 || err != nil:
		w.p.cfg.logger.Warn("term ended with effects that ran but could not be marked done: the partition's next owner may run them again (the idempotency key absorbs it)",
			append(attrs, "left", left, "err", err)...)
	case finished > 0:
		w.p.cfg.logger.Info("term ended with a batch whose outcome was unknown: marked done the effects that ran", attrs...)
	}
}
