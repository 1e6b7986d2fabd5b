package pipeline

import (
	"errors"
	"fmt"

	"github.com/shardpipe/shardpipe/sink"
)

// LossReporter is a Barrier that also says when effects that landed may
// have been lost since: sink.Durable counts the times it found a primary of
// the ledger's Redis changed (a replica that took over, a restarted server),
// which can drop writes that server had acknowledged but not replicated.
//
// With such a barrier (BeforeCommit), a worker notes the count when each
// record (each batch) first starts to apply; when the count has moved since
// by the time it commits past the record, it applies the record again
// before it commits past it: the ledger suppresses those whose claims
// survived and applies the rest, so no effect is lost. The count is kept
// per record, so with MaxInFlight a record that was still running when the
// loss was counted is applied again however many records started after it. That costs one more
// round trip per batch since the commit, only after a loss, and keeps the
// records since the last commit in memory (at most MaxUncommitted). Records
// dead-lettered since the commit are not written again; their markers may
// be gone, so a later replay of them writes the dead letter again.
//
// Guard mode (Guarded, also inside ByTopic or Paced) is left alone: its
// effects ran outside Redis, and applying again would run those whose done
// claims were lost a second time.
// A lost done claim there leaves the effect run once; only a replay of the
// record could run it again. The worker logs the loss.
type LossReporter interface {
	Barrier
	// Losses returns how many losses were found so far; it only grows.
	Losses() uint64
}

// losses reads the barrier's loss count, and whether it keeps one.
func (w *worker) losses() (uint64, bool) {
	lr, ok := w.p.cfg.barrier.(LossReporter)
	if !ok {
		return 0, false
	}
	return lr.Losses(), true
}

// lossCount is the loss count a record starting to apply now notes: a loss
// counted later may have taken its writes. 0 without a LossReporter.
func (w *worker) lossCount() uint64 {
	n, _ := w.losses()
	return n
}

// errLost: a loss was found after the records below the commit point began
// to land; they are applied again before the next commit.
var errLost = errors.New("ledger writes since the last commit may be lost; applying them again before committing")

// lost reports whether a loss was counted since a record below point was
// applied.
func (w *worker) lost(point int64) bool {
	n, ok := w.losses()
	return ok && w.e.lost(point, n)
}

// reapplyLost applies again every landed record below point that a loss
// counted since it was applied may have taken (see LossReporter), in
// batches of MaxBatch, each retried like any batch until it is known. Each
// record is judged by the count when it was applied, not by one baseline
// for the partition: a record still running when the loss was counted is
// applied again however many others started since.
func (w *worker) reapplyLost(point int64) error {
	n, ok := w.losses()
	if !ok {
		return nil
	}
	idx := w.e.exposed(point, n)
	if len(idx) == 0 {
		return nil
	}
	if external(w.p.cfg.applier) {
		w.p.cfg.logger.Warn("ledger writes since the last commit may be lost (the ledger's Redis failed over); guard mode does not run the effects again: a claim that was lost lets a later replay of its record run the effect again",
			"partition", w.part.String(), "epoch", w.epoch, "records", len(idx), "committed", w.committed())
		w.e.reapplied(idx, n)
		return nil
	}
	first, last := w.e.redo[idx[0]].r.Offset, w.e.redo[idx[len(idx)-1]].r.Offset
	w.p.cfg.logger.Warn("ledger writes since the last commit may be lost (the ledger's Redis failed over); applying those records again before committing",
		"partition", w.part.String(), "epoch", w.epoch, "records", len(idx), "first_offset", first,
		"last_offset", last, "committed", w.committed())
	batch := make([]sink.Record, 0, min(len(idx), w.p.cfg.maxBatch))
	for i := 0; i < len(idx); i += w.p.cfg.maxBatch {
		batch = batch[:0]
		for _, j := range idx[i:min(i+w.p.cfg.maxBatch, len(idx))] {
			batch = append(batch, w.e.redo[j].r)
		}
		if _, err := w.apply(batch); err != nil {
			return fmt.Errorf("%s epoch %d offsets %d..%d: applying again after a ledger loss: %w", w.part, w.epoch, first, last, err)
		}
	}
	w.e.reapplied(idx, n)
	return nil
}
