package pipeline

import (
	"errors"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// failedForGood is the one path of every record that failed for good with
// dead letters configured, whatever the cause (a poison record past its
// attempts, an effect given up), in both schedules. The record counts in
// its partition's run of failures and in the pipeline's sum of runs
// (runner.failing); the engine decides (engine.failed): the record that
// makes that sum exceed DeadLetterMaxRun stops the pipeline with
// ErrPoisonStorm; until the partition has seen a success in this term the
// record is held, unlanded (succeeded dead-letters it); after one it is
// dead-lettered at once.
func (w *worker) failedForGood(r *sink.Record, cause error, attempts int) error {
	h := heldRecord{r: *r, cause: cause, attempts: attempts}
	n := int(w.p.failing.Add(1))
	switch verdict, storm := w.e.failed(h, n); verdict {
	case stormStop:
		return w.recordError(r, attempts, ErrPoisonStorm, storm)
	case stormDeadLetter:
		return w.deadLetterHeld(h)
	}
	held := int64(len(w.e.storms.held))
	w.p.stats.update(w.part, func(s *PartitionStats) { s.FailedHeld = held })
	w.warn("record failed for good with no success of its partition yet: held, not dead-lettered, until a later record succeeds (the offset stays uncommitted)",
		"offset", r.Offset, "attempts", attempts, "held", held, "failing_in_pipeline", n, "err", cause)
	return nil
}

// succeeded notes that a record of the partition succeeded: the records
// held before it are dead-lettered and landed, in offset order, each
// through the share bound, and the partition's run of failures ends.
func (w *worker) succeeded() error {
	hs, run, ok := w.e.succeed()
	if !ok {
		return nil // stopping on a storm: what is held stays unlanded (dropHeld)
	}
	if run > 0 {
		w.p.failing.Add(-int64(run))
	}
	for i := range hs {
		if err := w.deadLetterHeld(hs[i]); err != nil {
			for _, h := range hs[i:] {
				w.e.storms.hold(h) // those it could not write stay held
			}
			return err
		}
	}
	if len(hs) > 0 {
		w.p.stats.update(w.part, func(s *PartitionStats) { s.FailedHeld = 0 })
	}
	w.e.released()
	return nil
}

// deadLetterHeld writes h's dead letter, unless it makes the window's
// share of dead letters exceed DeadLetterMaxShare, and lands h.
func (w *worker) deadLetterHeld(h heldRecord) error {
	if storm := w.e.deadLetterAllowed(h); storm != nil {
		return w.recordError(&h.r, h.attempts, ErrPoisonStorm, storm)
	}
	out, err := w.deadLetter(&h.r, h.cause, h.attempts)
	if err != nil {
		return err
	}
	if err := w.e.deadLettered(h.r.Offset, time.Now()); err != nil {
		return err
	}
	point, givenUp := w.e.tr.CommitPoint(), errors.Is(h.cause, ErrEffectFailed)
	w.p.stats.update(w.part, func(s *PartitionStats) {
		s.Landed = point
		if givenUp {
			s.EffectsGivenUp++
		}
		if out == dlqWritten {
			s.DeadLettered++
		} else {
			s.DeadLetterReplays++
		}
	})
	return nil
}

// heldAtEnd settles a replay's partition that read its range to the end
// holding records: none of its records succeeded, so the pipeline stops
// with ErrPoisonStorm (no record of the range satisfied the
// configuration) and nothing is dead-lettered.
func (w *worker) heldAtEnd() error {
	storm, h := w.e.atEnd()
	if storm == nil {
		return nil
	}
	return w.recordError(&h.r, h.attempts, ErrPoisonStorm, storm)
}

// dropHeld ends the term's run of failures: the held records, unlanded,
// are read again by the partition's next owner.
func (w *worker) dropHeld() {
	run, hs := w.e.endRun()
	if run > 0 {
		w.p.failing.Add(-int64(run))
	}
	if len(hs) == 0 {
		return
	}
	w.p.stats.update(w.part, func(s *PartitionStats) { s.FailedHeld = 0 })
	w.p.cfg.logger.Warn("term ended holding records that failed for good (not dead-lettered, not committed past): the partition's next owner reads them again",
		"partition", w.part.String(), "epoch", w.epoch, "held", len(hs), "first_offset", hs[0].r.Offset)
}
