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
// With such a barrier (BeforeCommit), a worker remembers the count when it
// starts applying records past its last commit; when the count has moved
// by the time it commits, it applies every record since that commit again
// before it commits past them: the ledger suppresses those whose claims
// survived and applies the rest, so no effect is lost. That costs one more
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

// noteLosses notes the loss count when nothing landed since the last
// commit: a loss found after this point may have taken the batch's writes.
func (w *worker) noteLosses() {
	if len(w.redo) == 0 {
		w.lossSeen, _ = w.losses()
	}
}

// keep remembers the records of batch whose effects landed, to apply them
// again after a loss. Nothing is kept without a LossReporter.
func (w *worker) keep(batch []sink.Record, results []sink.Result) {
	if _, ok := w.losses(); !ok {
		return
	}
	for i, r := range results {
		if r.Err == nil {
			w.redo = append(w.redo, batch[i])
		}
	}
}

// committedRedo forgets what a commit moved past.
func (w *worker) committedRedo() {
	if cap(w.redo) > 4*w.p.cfg.maxBatch {
		w.redo = nil // do not keep a large buffer after a long stretch of failed commits
		return
	}
	clear(w.redo)
	w.redo = w.redo[:0]
}

// errLost: a loss was found after the records since the last commit began
// to land; they are applied again before the next commit.
var errLost = errors.New("ledger writes since the last commit may be lost; applying them again before committing")

// lost reports whether the loss count moved since the records past the
// last commit began to land.
func (w *worker) lost() bool {
	n, ok := w.losses()
	return ok && n != w.lossSeen && len(w.redo) > 0
}

// reapplyLost applies every record since the last commit again when a loss
// was found since they began to land (see LossReporter), in batches of
// MaxBatch, each retried like any batch until it is known.
func (w *worker) reapplyLost() error {
	n, ok := w.losses()
	if !ok || n == w.lossSeen {
		return nil
	}
	if len(w.redo) == 0 {
		w.lossSeen = n
		return nil
	}
	if external(w.p.cfg.applier) {
		w.p.cfg.logger.Warn("ledger writes since the last commit may be lost (the ledger's Redis failed over); guard mode does not run the effects again: a claim that was lost lets a later replay of its record run the effect again",
			"partition", w.part.String(), "epoch", w.epoch, "records", len(w.redo), "committed", w.committed())
		w.lossSeen = n
		return nil
	}
	w.p.cfg.logger.Warn("ledger writes since the last commit may be lost (the ledger's Redis failed over); applying those records again before committing",
		"partition", w.part.String(), "epoch", w.epoch, "records", len(w.redo), "first_offset", w.redo[0].Offset,
		"last_offset", w.redo[len(w.redo)-1].Offset, "committed", w.committed())
	for i := 0; i < len(w.redo); i += w.p.cfg.maxBatch {
		batch := w.redo[i:min(i+w.p.cfg.maxBatch, len(w.redo))]
		if _, err := w.apply(batch); err != nil {
			return fmt.Errorf("%s epoch %d: applying again after a ledger loss: %w", w.part, w.epoch, err)
		}
	}
	w.lossSeen = n
	return nil
}

// external reports whether a's effects happen outside Redis: Guarded, or a
// ByTopic or Paced around one.
func external(a Applier) bool {
	switch a := a.(type) {
	case guarded:
		return true
	case *paced:
		return external(a.a)
	case byTopic:
		for _, l := range a {
			if external(l) {
				return true
			}
		}
	}
	return false
}
