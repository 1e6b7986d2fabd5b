package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// commit moves the partition's offset to the tracker's commit point.
//
// A refusal by the local fence (the term was released) ends the worker. A
// refusal by the broker while the term is still held here, or any other
// retriable failure, is retried with backoff at the next commit point:
// franz-go reports a real loss of membership through onLost, which releases
// the term. A non-retriable broker error (authorisation, say) stops the
// pipeline.
func (w *worker) commit() error {
	if !w.e.dirty() {
		return nil
	}
	if err := w.ctx.Err(); err != nil {
		return err // lost or aborted: no commit of this term may land
	}
	point, leaderEpoch := w.e.tr.CommitPoint(), w.e.tr.CommitLeaderEpoch()
	ctx, cancel := context.WithTimeout(context.Background(), w.p.cfg.commitTimeout)
	defer cancel()
	// Every effect before point has landed. This is the one place a
	// partition's offset moves: a step that must come before any commit
	// (waiting for the ledger writes to be durable) belongs just here.
	if err := w.reapplyLost(point); err != nil {
		return err
	}
	done := w.roundTrip()
	err := w.durable(ctx, point)
	if err == nil && w.lost(point) {
		err = errLost // found by another partition's wait: apply again first
	}
	if err == nil && !w.fenced.Load() {
		// CountOnce: counted now, whatever the reply; a fenced term's commit
		// is refused below and must not count what the next owner will.
		err = w.raiseMark(ctx, point)
	}
	if err == nil {
		err = w.p.store.CommitAt(ctx, w.part, w.epoch, point, leaderEpoch)
	}
	if d := done(err); w.p.cfg.meter != nil {
		w.p.cfg.meter.CommitRoundTrip(w.part, d, err)
	}
	if err == nil {
		w.e.committed(point, time.Now())
		w.countCommitted(point)
		w.p.stats.update(w.part, func(s *PartitionStats) { s.Committed, s.CommitFailures = point, 0 })
		w.p.emit(Event{Kind: Committed, Partition: w.part, Epoch: w.epoch, Offset: point})
		return nil
	}
	held, ok := w.p.store.Held(w.part)
	local := !ok || held.Epoch != w.epoch
	stale := errors.Is(err, checkpoint.ErrStaleEpoch) || errors.Is(err, checkpoint.ErrStaleOffset)
	if stale {
		w.p.stats.update(w.part, func(s *PartitionStats) { s.Fenced++ })
	}
	if stale && local {
		w.fence()
		w.p.stats.update(w.part, func(s *PartitionStats) { s.TermFenced = true })
	}
	w.p.emit(Event{Kind: CommitRefused, Partition: w.part, Epoch: w.epoch, Offset: point, Err: err})
	if stale && local {
		w.p.cfg.logger.Warn("commit refused: this worker no longer owns the partition",
			"partition", w.part.String(), "epoch", w.epoch, "offset", point, "err", err)
		return errFenced
	}
	var ke *kerr.Error
	if !stale && errors.As(err, &ke) && !ke.Retriable && !errors.Is(ke, kerr.RebalanceInProgress) {
		return fmt.Errorf("%s epoch %d: commit of offset %d: %w", w.part, w.epoch, point, err)
	}
	failures, backoff := w.e.commitFailed(time.Now())
	w.p.stats.update(w.part, func(s *PartitionStats) { s.CommitFailures = int64(failures) })
	w.p.cfg.logger.Warn("commit failed; retrying", "partition", w.part.String(), "epoch", w.epoch,
		"offset", point, "failures", failures, "retry_in", backoff, "err", err)
	return nil
}

// commitIfDue commits when the policy wants a commit now.
func (w *worker) commitIfDue() error {
	if w.e.dueAt(time.Now()) {
		return w.commit()
	}
	return nil
}
