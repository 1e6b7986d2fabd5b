package pipeline

import (
	"errors"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// failedForGood is the one path of every record that failed for good with
// dead letters configured, whatever the cause (a poison record past its
// attempts, an effect given up), in both schedules. The engine decides
// (engine.failed): a record a later success of its partition already
// followed is dead-lettered at once; any other joins its partition's run
// and the pipeline's sum of runs (runner.failing), held, unlanded, until
// a later record of the partition succeeds (succeeded dead-letters it),
// and the record that makes the sum exceed DeadLetterMaxRun stops the
// pipeline with ErrPoisonStorm, nothing of the run dead-lettered.
func (w *worker) failedForGood(r *sink.Record, cause error, attempts int) error {
	h := heldRecord{r: *r, cause: cause, attempts: attempts}
	n := 0
	switch verdict, storm := w.e.failed(h, func() int { n = int(w.p.failing.Add(1)); return n }, time.Now()); verdict {
	case stormStop:
		return w.recordError(r, attempts, ErrPoisonStorm, storm)
	case stormDeadLetter:
		return w.deadLetterHeld(h)
	}
	held := int64(len(w.e.storms.held))
	w.p.stats.update(w.part, func(s *PartitionStats) { s.FailedHeld = held })
	w.warn("record failed for good: held, not dead-lettered, until a later record of its partition succeeds (the offset stays uncommitted)",
		"offset", r.Offset, "attempts", attempts, "held", held, "failing_in_pipeline", n, "err", cause)
	return nil
}

// succeeded notes that the record of the partition at off succeeded: the
// records held below it are dead-lettered and landed, in offset order,
// each through the share bound, and the run they were part of leaves the
// pipeline's sum.
func (w *worker) succeeded(off int64) error {
	hs, left, ok := w.e.succeed(off)
	if !ok {
		return nil // stopping on a storm: what is held stays unlanded (dropHeld)
	}
	w.p.failing.Add(-int64(left))
	if err := w.release(hs, false); err != nil {
		return err
	}
	w.e.released()
	return nil
}

// releaseIdle dead-letters the records held with no success after them
// once the partition has been idle for the commit interval (engine.idle),
// and commits past them: they stay in the pipeline's sum until a later
// record succeeds.
func (w *worker) releaseIdle() error {
	hs := w.e.idle(time.Now())
	if len(hs) == 0 {
		return nil
	}
	w.p.cfg.logger.Info("records held with no success after them dead-lettered: their partition read nothing new for the commit interval",
		"partition", w.part.String(), "epoch", w.epoch, "records", len(hs), "first_offset", hs[0].r.Offset)
	if err := w.release(hs, true); err != nil {
		return err
	}
	return w.commit() // idle for the interval: commit past them now, whatever the policy counts
}

// release dead-letters and lands hs in offset order; those it could not
// write are held again, back in the pipeline's sum (or, aside, in the
// partition's run of idle dead letters, which they never left).
func (w *worker) release(hs []heldRecord, aside bool) error {
	for i := range hs {
		if err := w.deadLetterHeld(hs[i]); err != nil {
			left := hs[i:]
			if aside {
				w.e.storms.aside -= len(left)
			} else {
				w.p.failing.Add(int64(len(left)))
			}
			for _, h := range left {
				w.e.storms.hold(h)
			}
			return err
		}
	}
	if len(hs) > 0 {
		held := int64(len(w.e.storms.held))
		w.p.stats.update(w.part, func(s *PartitionStats) { s.FailedHeld = held })
	}
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
// holding records: when none of its records succeeded, the pipeline stops
// with ErrPoisonStorm (no record of the range satisfied the
// configuration) and nothing is dead-lettered; otherwise the held records,
// the range's last, failed after good ones within the bound and are
// dead-lettered.
func (w *worker) heldAtEnd() error {
	storm, h, release := w.e.atEnd()
	if storm != nil {
		return w.recordError(&h.r, h.attempts, ErrPoisonStorm, storm)
	}
	w.p.failing.Add(-int64(len(release)))
	return w.release(release, false)
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
