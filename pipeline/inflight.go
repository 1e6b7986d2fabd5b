package pipeline

import (
	"fmt"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// flight is a worker's state with MaxInFlight: the records admitted from
// its queue and not landed, and the effects running (how the loop ends is
// the engine's: termEnd). The worker goroutine alone touches it; effects
// report on done.
type flight struct {
	s    *keySched[*flightRecord]
	done chan flightDone // capacity MaxInFlight: an effect never blocks on it
	last int64           // the last offset started
}

// flightRecord is a record held by the scheduler, and the loss count when
// its effect first started in this term (reapply.go): a retry keeps it, as
// the first attempt may have written.
type flightRecord struct {
	sink.Record
	lossAt  uint64
	started bool
	fails   failCounts // its failed attempts in this term (onFailure)
}

// flightDone is one effect's report.
type flightDone struct {
	key     string
	r       *flightRecord
	results []sink.Result
	err     error
}

// loopInFlight is loop with MaxInFlight, the in-flight driver of the
// engine's step (enginestep.go): records go from the queue into a
// keySched, which starts them up to the caps, and land in any order in the
// tracker, whose commit point stays before the lowest offset not landed.
func (w *worker) loopInFlight() (err error) {
	f := &flight{s: newKeySched[*flightRecord](w.p.cfg.maxInFlight), done: make(chan flightDone, w.p.cfg.maxInFlight)}
	defer func() { err = w.endFlight(f, err) }()
	for {
		s := loopState{mode: w.mode.Load(), fenced: w.fenced.Load(), queued: w.q.len(),
			held: f.s.Held(), running: f.s.Running(), waiting: f.s.Waiting()}
		st := w.e.next(s, time.Now())
		if st.freeze {
			w.e.freeze()
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
			return nil // the engine's exit returns the failure
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
	for !w.e.end.crash {
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
	_, crash := crashPoint(w, batch) // none start after it: startReady stops at the crash
	w.attempts++
	f.last = r.Offset
	ctx := w.applyCtx()
	go func() {
		results, err := w.p.cfg.applier.Apply(ctx, batch)
		<-w.p.slots
		f.done <- flightDone{key: key, r: r, results: results, err: err}
	}()
	w.flightStats(f)
	if crash {
		w.e.crashAt()
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
	frozen := w.e.end.frozen
	if !frozen {
		var stopRetry, stopIdle func()
		retryC, stopRetry = w.timerAt(f.s.WakeAt())
		defer stopRetry()
		idleC, stopIdle = w.timerAt(w.e.idleAt())
		defer stopIdle()
	}
	var ready <-chan struct{}
	if !frozen {
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
	if !frozen && f.s.CanRun(time.Now()) {
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

// settle takes an effect's report: the record lands, or the engine
// judges its failure (onFailure, as for batches): it waits for a retry,
// fails for good (the storm path, or the partition stops on it), is left
// to the next owner, or stops the partition.
func (w *worker) settle(f *flight, d flightDone) error {
	defer w.flightStats(f)
	res, err := d.results, d.err
	if err == nil && len(res) != 1 {
		err = fmt.Errorf("%s: sink returned %d results for 1 record", w.part, len(res))
	}
	attempts, batch := d.r.fails.total()+1, []sink.Record{d.r.Record}
	if err == nil && res[0].Err == nil {
		f.s.Done(d.key)
		return w.land(batch, res, attempts, d.r.lossAt)
	}
	if err == nil {
		err = res[0].Err
	}
	kind := classify(err)
	attempts, own := d.r.fails.note(kind)
	stopping := w.e.end.frozen || givingUp(w.mode.Load()) || w.fenced.Load()
	act, wait := w.e.onFailure(kind, attempts, own, stopping)
	if act == actRetry {
		f.s.Retry(d.key, time.Now().Add(wait))
		if kind != failPoison {
			w.warn("effect failed, retrying the record; its key's later records wait, other keys go on, and the commit point stays before it",
				"offset", d.r.Offset, "attempts", attempts, "committed", w.committed(), "retry_in", wait, "err", err)
		}
		return nil
	}
	f.s.Done(d.key)
	switch act {
	case actForGood:
		if err := w.land(batch, []sink.Result{{Key: resultKey(res), Err: err}}, attempts, d.r.lossAt); err != nil {
			w.e.stopOn(err) // no dead letters, or the write cannot land
		}
	case actLeave:
		w.e.leave(err, d.r.Record) // its effect may have run: finished at exit
	case actStop:
		w.e.stopOn(w.recordError(&d.r.Record, attempts, sink.ErrMisconfigured, err)) // not landed: the commit point stays before it
	}
	return nil
}

// resultKey is the business key of a one-record call's result, if any.
func resultKey(res []sink.Result) string {
	if len(res) == 1 {
		return res[0].Key
	}
	return ""
}

// giveUpWaiting leaves every record waiting for a retry.
func (w *worker) giveUpWaiting(f *flight) {
	for _, it := range f.s.DropWaiting() {
		w.e.leave(fmt.Errorf("offset %d: its retry given up at the stop", it.V.Offset), it.V.Record)
	}
}

// endFlight waits for the effects still running (unless the run is
// aborted or the worker crashed), lands those that landed, and leaves the
// failed ones and those waiting for a retry to the engine's exit, which
// the worker's run reads.
func (w *worker) endFlight(f *flight, err error) error {
	if !w.e.end.crash && w.halt.Err() == nil {
		for f.s.Running() > 0 {
			d := <-f.done
			w.e.freeze()
			if serr := w.settle(f, d); serr != nil && err == nil {
				err = serr
			}
		}
	}
	for _, it := range f.s.DropWaiting() {
		w.e.leave(fmt.Errorf("offset %d: its retry given up at the term's end", it.V.Offset), it.V.Record)
	}
	w.p.stats.update(w.part, func(s *PartitionStats) { s.InFlight, s.Retrying = 0, 0 })
	return err
}

// flightStats publishes the records running and waiting for a retry.
func (w *worker) flightStats(f *flight) {
	running, waiting := int64(f.s.Running()), int64(f.s.Waiting())
	w.p.stats.update(w.part, func(s *PartitionStats) { s.InFlight, s.Retrying = running, waiting })
}
