package pipeline

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// flight is a worker's state with MaxInFlight: the records admitted from
// its queue and not landed, the effects running, and how the loop ends.
// The worker goroutine alone touches it; effects report on done.
type flight struct {
	s    *keySched[*flightRecord]
	done chan flightDone // capacity MaxInFlight: an effect never blocks on it
	// frozen: nothing more is admitted or started (a stop, a fence, a
	// failure with no retry to come); the loop ends once nothing runs.
	frozen bool
	fatal  error         // what stops the pipeline, if anything
	left   []sink.Record // records whose effect failed with no retry to come in this term
	leftBy error         // the failure of the first of them
	crash  bool          // the CrashAfter point is reached: crash once nothing runs
	last   int64         // the last offset started
}

// flightRecord is a record held by the scheduler, and the loss count when
// its effect first started in this term (reapply.go): a retry keeps it, as
// the first attempt may have written.
type flightRecord struct {
	sink.Record
	lossAt  uint64
	started bool
}

// flightDone is one effect's report.
type flightDone struct {
	key      string
	r        *flightRecord
	failures int // failures before this attempt
	results  []sink.Result
	err      error
}

// loopInFlight is loop with MaxInFlight, the in-flight driver of the
// engine's step (enginestep.go): records go from the queue into a
// keySched, which starts them up to the caps, and land in any order in the
// tracker, whose commit point stays before the lowest offset not landed.
func (w *worker) loopInFlight() (err error) {
	f := &flight{s: newKeySched[*flightRecord](w.p.cfg.maxInFlight), done: make(chan flightDone, w.p.cfg.maxInFlight)}
	defer func() { err = w.endFlight(f, err) }()
	for {
		s := loopState{mode: w.mode.Load(), fenced: w.fenced.Load(), queued: w.q.len(), frozen: f.frozen,
			held: f.s.Held(), running: f.s.Running(), waiting: f.s.Waiting(), crash: f.crash, fatal: f.fatal != nil}
		st := w.e.next(s, time.Now())
		if st.freeze {
			f.frozen = true
		}
		if st.giveUp {
			w.giveUpWaiting(f)
		}
		if st.take > 0 {
			if err := w.admit(f, st.take); err != nil {
				return err
			}
		}
		if st.start {
			if err := w.startReady(f); err != nil {
				return err
			}
		}
		switch st.then {
		case thenCrash:
			w.crash(f.last)
			return errFenced
		case thenFatal:
			return f.fatal
		case thenExit:
			return nil
		case thenFinish:
			if err := w.heldAtEnd(); err != nil {
				return err
			}
			return w.finishCommit() // a replay's range landed: commit its end
		case thenCommit:
			err = w.commit()
		case thenWait:
			err = w.waitFlight(f, s.mode)
		}
		if err != nil {
			return err
		}
	}
}

// admit moves n records from the queue into the scheduler (the engine
// sized n: no more than MaxUncommitted past the last commit, and no more
// than QueueRecords held).
func (w *worker) admit(f *flight, n int) error {
	recs := w.q.take(n)
	if len(recs) == 0 {
		return nil
	}
	w.begin(recs[0].Offset)
	var markers []int64
	for _, r := range recs {
		if err := w.e.read(r.Offset, r.LeaderEpoch); err != nil {
			return err
		}
		if r.Attrs.IsControl() {
			markers = append(markers, r.Offset)
			continue
		}
		fr := &flightRecord{Record: w.sinkRecord(r)}
		f.s.Add(w.keyOf(&fr.Record), fr.Offset, fr)
	}
	return w.landMarkers(markers)
}

// Keyer is an Applier that says a record's business key, by which
// MaxInFlight orders records that have no record key: Guarded and
// sink.Ledger do, and Wrap (so ByTopic and Paced) forwards it; the worker
// finds it through an Unwrap chain. An error means the record has no
// usable key: it is run on its own (and, unless the error is ErrNoKeyer,
// the Applier reports it as a poison record).
type Keyer interface {
	// Key returns r's business key as the Applier's key source reads it.
	Key(r *sink.Record) (string, error)
}

// keyOf is the key records are ordered by: the record key (what the
// producer partitioned by: an order, a customer, an account), else the
// business key when the applier says it, else none (the record runs on
// its own).
func (w *worker) keyOf(r *sink.Record) string {
	if r.Key != nil {
		return "r" + string(r.Key)
	}
	if k, ok := keyerOf(w.p.cfg.applier); ok {
		if key, err := k.Key(r); err == nil {
			return "b" + key
		}
	}
	return fmt.Sprintf("o%d", r.Offset)
}

// startReady starts every record the scheduler lets run, while the
// pipeline has slots free.
func (w *worker) startReady(f *flight) error {
	for !f.crash {
		select {
		case w.p.slots <- struct{}{}:
		default:
			return nil // the pipeline's cap: waitFlight waits for a slot
		}
		if !w.startOne(f) {
			<-w.p.slots
			return nil
		}
	}
	return nil
}

// startOne starts the next record the scheduler lets run on a slot already
// taken; false when none may run.
func (w *worker) startOne(f *flight) bool {
	key, it, ok := f.s.Next(time.Now())
	if !ok {
		return false
	}
	r := it.V
	if !r.started {
		r.lossAt, r.started = w.lossCount(), true
	}
	batch := []sink.Record{r.Record}
	w.beforeApply(batch)
	w.attempts++
	f.last = r.Offset
	ctx := w.applyCtx()
	go func() {
		results, err := w.p.cfg.applier.Apply(ctx, batch)
		<-w.p.slots
		f.done <- flightDone{key: key, r: r, failures: it.Failures, results: results, err: err}
	}()
	w.flightStats(f)
	if fs := w.p.faults.Load(); fs != nil {
		if k, ok := fs.Worker.CrashAfter[w.part]; ok && w.attempts >= k {
			f.crash, f.frozen = true, true
		}
	}
	return true
}

// waitFlight waits for an effect's report, records, a stop, a slot, a
// retry's time, the next commit or the time to dead-letter records held
// with no success after them (releaseIdle).
func (w *worker) waitFlight(f *flight, mode int32) error {
	commitC, stopCommit := w.timerAt(w.e.due())
	defer stopCommit()
	var retryC, idleC <-chan time.Time
	if !f.frozen {
		var stopRetry, stopIdle func()
		retryC, stopRetry = w.timerAt(f.s.WakeAt())
		defer stopRetry()
		idleC, stopIdle = w.timerAt(w.e.idleAt())
		defer stopIdle()
	}
	var ready <-chan struct{}
	if !f.frozen {
		ready = w.q.ready
	}
	var wake <-chan struct{}
	switch mode {
	case running:
		wake = w.wake
	case finishing:
		wake = w.quit // closed by a later stop that gives up
	}
	var slot chan<- struct{}
	if !f.frozen && f.s.CanRun(time.Now()) {
		slot = w.p.slots
	}
	select {
	case d := <-f.done:
		return w.settle(f, d)
	case <-ready:
	case <-wake:
	case <-retryC:
	case slot <- struct{}{}:
		if !w.startOne(f) {
			<-w.p.slots
		}
	case <-w.ctx.Done():
		return w.ctx.Err()
	case <-commitC:
		return w.commit()
	case <-idleC:
		return w.releaseIdle()
	}
	return nil
}

// settle takes an effect's report: the record lands, waits for a retry, is
// dead-lettered, or stops the partition.
func (w *worker) settle(f *flight, d flightDone) error {
	defer w.flightStats(f)
	err := d.err
	if err == nil && len(d.results) != 1 {
		err = fmt.Errorf("%s: sink returned %d results for 1 record", w.part, len(d.results))
	}
	attempts := d.failures + 1
	batch := []sink.Record{d.r.Record}
	var recErr error
	if err == nil {
		recErr = d.results[0].Err
	}
	switch {
	case err == nil && recErr == nil:
		f.s.Done(d.key)
		return w.land(batch, d.results, attempts, d.r.lossAt)
	case errors.Is(err, sink.ErrMisconfigured) || errors.Is(recErr, sink.ErrMisconfigured):
		f.s.Done(d.key) // not landed: the commit point stays before it
		w.stopFlight(f, w.recordError(&d.r.Record, attempts, sink.ErrMisconfigured, errors.Join(err, recErr)))
		return nil
	case recErr != nil && badRecord(recErr):
		if attempts < w.p.cfg.poison.Attempts && !f.frozen && !givingUp(w.mode.Load()) {
			f.s.Retry(d.key, time.Now().Add(w.p.cfg.poison.Ceiling(attempts)))
			return nil
		}
		f.s.Done(d.key)
		if err := w.land(batch, d.results, attempts, d.r.lossAt); err != nil {
			w.stopFlight(f, err) // no dead letters, or the write cannot land
		}
		return nil
	case recErr != nil:
		err = recErr // a per-record failure of unknown outcome
	}
	if errors.Is(err, ErrEffectFailed) && (errors.Is(err, sink.ErrRejected) || attempts >= w.p.cfg.effectAttempts) {
		f.s.Done(d.key)
		return w.giveUpEffect(f, &d.r.Record, err, attempts)
	}
	if f.frozen || givingUp(w.mode.Load()) || w.fenced.Load() {
		f.s.Done(d.key) // no retry in this term: left to the next owner
		w.leave(f, d.r.Record, err)
		return nil
	}
	backoff := w.p.cfg.retry.Ceiling(attempts)
	f.s.Retry(d.key, time.Now().Add(backoff))
	w.warn("effect failed, retrying the record; its key's later records wait, other keys go on, and the commit point stays before it",
		"offset", d.r.Offset, "attempts", attempts, "committed", w.committed(), "retry_in", backoff, "err", err)
	return nil
}

// giveUpEffect takes r, whose effect failed for good (cause), down the
// storm path every record that failed for good takes (failedForGood), or
// stops the partition on it without dead letters.
func (w *worker) giveUpEffect(f *flight, r *sink.Record, cause error, attempts int) error {
	if w.p.dlq == nil || w.p.cfg.stopOnEffectFailure {
		w.stopFlight(f, w.recordError(r, attempts, ErrEffectFailed, cause))
		return nil
	}
	w.p.stats.update(w.part, func(s *PartitionStats) { s.Attempts++ })
	if err := w.failedForGood(r, cause, attempts); err != nil {
		w.stopFlight(f, err)
	}
	return nil
}

// stopFlight freezes the partition on err: what runs is waited for, and
// the loop returns err (the final commit covers what landed before).
func (w *worker) stopFlight(f *flight, err error) {
	f.frozen = true
	if f.fatal == nil && !errors.Is(err, errFenced) {
		f.fatal = err
	}
}

// leave keeps r, whose effect failed with no retry to come in this term,
// for finishing at exit (its effect may have run) and freezes the partition.
func (w *worker) leave(f *flight, r sink.Record, cause error) {
	f.frozen = true
	f.left = append(f.left, r)
	if f.leftBy == nil {
		f.leftBy = cause
	}
}

// giveUpWaiting leaves every record waiting for a retry.
func (w *worker) giveUpWaiting(f *flight) {
	for _, it := range f.s.DropWaiting() {
		w.leave(f, it.V.Record, fmt.Errorf("offset %d: its retry given up at the stop", it.V.Offset))
	}
}

// endFlight waits for the effects still running (unless the run is
// aborted or the worker crashed), lands those that landed, and leaves the
// failed ones for finishing: w.unknown, by offset. A loop that ended
// leaving records returns errStopped when nothing worse happened.
func (w *worker) endFlight(f *flight, err error) error {
	if !f.crash && w.halt.Err() == nil {
		for f.s.Running() > 0 {
			d := <-f.done
			f.frozen = true
			if serr := w.settle(f, d); serr != nil && err == nil {
				err = serr
			}
		}
	}
	for _, it := range f.s.DropWaiting() {
		f.left = append(f.left, it.V.Record)
	}
	if len(f.left) > 0 {
		sort.Slice(f.left, func(i, j int) bool { return f.left[i].Offset < f.left[j].Offset })
		w.unknown = f.left
	}
	w.p.stats.update(w.part, func(s *PartitionStats) { s.InFlight, s.Retrying = 0, 0 })
	if err == nil && f.fatal != nil {
		err = f.fatal
	}
	if err == nil && len(f.left) > 0 && !w.fenced.Load() {
		first, last := f.left[0].Offset, f.left[len(f.left)-1].Offset
		err = fmt.Errorf("%s epoch %d offsets %d..%d: %w: %w", w.part, w.epoch, first, last, errStopped, f.leftBy)
	}
	return err
}

// flightStats publishes the records running and waiting for a retry.
func (w *worker) flightStats(f *flight) {
	running, waiting := int64(f.s.Running()), int64(f.s.Waiting())
	w.p.stats.update(w.part, func(s *PartitionStats) { s.InFlight, s.Retrying = running, waiting })
}
