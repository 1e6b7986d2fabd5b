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
// (runner.failing); the record that makes that sum exceed DeadLetterMaxRun
// stops the pipeline with ErrPoisonStorm. Until the partition has seen a
// success in this term the record is held, unlanded (succeeded
// dead-letters it); after one it is dead-lettered at once.
func (w *worker) failedForGood(r *sink.Record, cause error, attempts int) error {
	d := w.p.dlq.cfg
	g := &w.storms
	if g.run == 0 {
		g.first = r.Offset
	}
	g.run++
	n := int(w.p.failing.Add(1))
	if d.maxRun > 0 && n > d.maxRun {
		g.stormed = true // no later success of this term releases what is held
		first := g.first
		if len(g.held) > 0 {
			first = min(first, g.held[0].r.Offset)
		}
		return w.recordError(r, attempts, ErrPoisonStorm, &PoisonStormError{Run: n, MaxRun: d.maxRun,
			InWindow: g.count, Window: d.window, MaxShare: d.maxShare, First: first, NoSuccess: !g.succeeded, Cause: cause})
	}
	h := heldRecord{r: *r, cause: cause, attempts: attempts}
	if g.succeeded || d.maxRun == 0 {
		// After a success, or with no bound to stop a storm at (holding
		// would then keep the whole topic in memory): dead-lettered now.
		return w.deadLetterHeld(h)
	}
	g.hold(h)
	held := int64(len(g.held))
	w.p.stats.update(w.part, func(s *PartitionStats) { s.FailedHeld = held })
	w.warn("record failed for good with no success of its partition yet: held, not dead-lettered, until a later record succeeds (the offset stays uncommitted)",
		"offset", r.Offset, "attempts", attempts, "held", held, "failing_in_pipeline", n, "err", cause)
	return nil
}

// succeeded notes that a record of the partition succeeded: the records
// held before it are dead-lettered and landed, in offset order, each
// through the share bound, and the partition's run of failures ends.
func (w *worker) succeeded() error {
	g := &w.storms
	if g.stormed {
		return nil // stopping on a storm: what is held stays unlanded (dropHeld)
	}
	g.succeeded = true
	if len(g.held) > 0 {
		if err := w.releaseHeld(); err != nil {
			return err
		}
	}
	if g.run > 0 {
		w.p.failing.Add(-int64(g.run))
		g.run = 0
	}
	g.see(false)
	return nil
}

// releaseHeld dead-letters and lands the held records, in offset order;
// those it could not stay held.
func (w *worker) releaseHeld() error {
	hs := w.storms.take()
	for i := range hs {
		if err := w.deadLetterHeld(hs[i]); err != nil {
			for _, h := range hs[i:] {
				w.storms.hold(h)
			}
			return err
		}
	}
	w.p.stats.update(w.part, func(s *PartitionStats) { s.FailedHeld = 0 })
	return nil
}

// deadLetterHeld writes h's dead letter, unless it makes the window's
// share of dead letters exceed DeadLetterMaxShare, and lands h.
func (w *worker) deadLetterHeld(h heldRecord) error {
	d := w.p.dlq.cfg
	if w.storms.ring == nil && d.maxShare > 0 {
		w.storms.ring = make([]bool, d.window)
	}
	w.storms.see(true)
	if d.maxShare > 0 && float64(w.storms.count) > d.maxShare*float64(d.window) {
		return w.recordError(&h.r, h.attempts, ErrPoisonStorm, &PoisonStormError{Run: w.storms.run, MaxRun: d.maxRun,
			InWindow: w.storms.count, Window: d.window, MaxShare: d.maxShare, First: h.r.Offset, Cause: h.cause})
	}
	out, err := w.deadLetter(&h.r, h.cause, h.attempts)
	if err != nil {
		return err
	}
	if err := w.tr.Land(h.r.Offset); err != nil {
		return err
	}
	if w.since.IsZero() {
		w.since = time.Now()
	}
	point, givenUp := w.tr.CommitPoint(), errors.Is(h.cause, ErrEffectFailed)
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
	if len(w.storms.held) == 0 {
		return nil
	}
	h := w.storms.held[0]
	return w.recordError(&h.r, h.attempts, ErrPoisonStorm, &PoisonStormError{Run: len(w.storms.held),
		MaxRun: w.p.dlq.cfg.maxRun, First: h.r.Offset, NoSuccess: true, AtEnd: true, Cause: h.cause})
}

// dropHeld ends the term's run of failures: the held records, unlanded,
// are read again by the partition's next owner.
func (w *worker) dropHeld() {
	g := &w.storms
	if g.run > 0 {
		w.p.failing.Add(-int64(g.run))
		g.run = 0
	}
	hs := g.take()
	if len(hs) == 0 {
		return
	}
	w.p.stats.update(w.part, func(s *PartitionStats) { s.FailedHeld = 0 })
	w.p.cfg.logger.Warn("term ended holding records that failed for good (not dead-lettered, not committed past): the partition's next owner reads them again",
		"partition", w.part.String(), "epoch", w.epoch, "held", len(hs), "first_offset", hs[0].r.Offset)
}
