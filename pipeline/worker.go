package pipeline

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// worker owns one partition for one term: its queue, tracker and commits.
// Everything but the atomics is touched by the worker goroutine alone.
type worker struct {
	p      *runner
	part   checkpoint.Partition
	epoch  int64
	member string // group member ID: with epoch it names this term in ledger claims
	q      *queue
	ctx    context.Context // canceled when the partition is lost or the pipeline aborts
	cancel context.CancelFunc
	// term is ctx, canceled also when the term is fenced: dead-letter
	// writes run under it, so a fenced worker writes none.
	term    context.Context
	endTerm context.CancelFunc
	wake    chan struct{} // closed by the first stop
	quit    chan struct{} // closed by the first stop that gives up (givingUp)
	done    chan struct{}

	mode   atomic.Int32
	fenced atomic.Bool // the term ended without this worker: no commit may land
	// finishing: past its final commit, marking done the effects of its
	// unknown batch that ran (Finisher); a timeout that stops waiting for
	// it then abandons no commit.
	finishing atomic.Bool
	// finishBy is when, in Unix ns, the time granted to finish the unknown
	// batch at exit ends (grant); 0: none (Abort, a kill nobody waits for).
	finishBy atomic.Int64
	halt     context.Context // ended by Abort: not even finishing goes on
	haltNow  context.CancelFunc

	// e is the partition's state for the term, both schedules' (engine.go):
	// the worker is its driver.
	e        *engine
	attempts int
	buf      []sink.Record
	lastWarn time.Time // the last retry warning (rate limited by warn)
	unlogged int       // retries not logged since

	// unknown are the records the term left with their outcomes unknown
	// (engine.exit), by offset: finishUnknown finishes them at exit.
	unknown []sink.Record
}

func newWorker(p *runner, part checkpoint.Partition, epoch int64, member string) *worker {
	ctx, cancel := context.WithCancel(context.Background())
	term, endTerm := context.WithCancel(ctx)
	tps := map[string][]int32{part.Topic: {part.Partition}}
	q := newQueue(p.cfg.queueRecords, p.cfg.queueBytes,
		func() { p.cl.PauseFetchPartitions(tps) },
		func() { p.cl.ResumeFetchPartitions(tps) })
	halt, haltNow := context.WithCancel(context.Background())
	return &worker{p: p, part: part, epoch: epoch, member: member, q: q,
		ctx: ctx, cancel: cancel, term: term, endTerm: endTerm, wake: make(chan struct{}), quit: make(chan struct{}), done: make(chan struct{}),
		halt: halt, haltNow: haltNow, e: newEngine(&p.cfg, p.dlqConfig())}
}

// stop asks the worker to exit in mode; a stronger mode wins.
func (w *worker) stop(mode int32) {
	for {
		cur := w.mode.Load()
		if cur >= mode {
			return
		}
		if w.mode.CompareAndSwap(cur, mode) {
			if cur == running {
				close(w.wake)
			}
			if !givingUp(cur) && givingUp(mode) {
				close(w.quit)
			}
			return
		}
	}
}

// fence ends the term: no commit of it may land, no dead letter be written.
// An apply under way may finish (the ledger suppresses what the next owner
// already applied).
func (w *worker) fence() {
	w.fenced.Store(true)
	w.endTerm()
}

// kill ends the worker at once with no commit (lost partition, abort).
func (w *worker) kill() {
	w.fence()
	w.cancel()
	w.stop(revoking)
}

// abort ends the worker as a process death would: no commit, and no
// finishing of an unknown batch (Abort).
func (w *worker) abort() {
	w.finishBy.Store(0)
	w.haltNow()
	w.kill()
}

func (w *worker) run() {
	defer close(w.done)
	defer w.cancel()
	defer w.haltNow()
	err := w.loadMark() // countonce.go
	if err == nil {
		err = w.loop()
	}
	if errors.Is(err, errLeft) {
		err = nil // the engine's exit says why
	}
	w.unknown, err = w.e.exit(w.part, w.epoch, err, w.fenced.Load())
	if w.ctx.Err() == nil && !errors.Is(err, errFenced) {
		// The final commit of a revoke, a drain or a stop on error: what
		// landed is committed, nothing past it. A worker fenced by the
		// revoke timeout tries too, and is refused (and counted) by the
		// store: that is the zombie's late commit.
		cerr := w.commit()
		if errors.Is(err, errStopped) {
			w.leftForReplay(err)
			err = nil
		}
		if err == nil {
			err = cerr
		}
	}
	// The effects that ran in a batch left unknown are marked done now,
	// or the next owner runs them again: after the final commit, within
	// the time granted.
	w.dropHeld() // first: finishUnknown may wait, and others count what is held
	w.finishUnknown()
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, errFenced) && !errors.Is(err, errStopped) {
		w.p.fail(err)
	}
}

// leftForReplay logs what a worker stopped with a batch of unknown effects
// (stopped: why) leaves to the partition's next owner: the records from the
// commit point on, read again then (the ledger suppresses whatever landed).
func (w *worker) leftForReplay(stopped error) {
	w.p.cfg.logger.Warn("stopped with records left for replay", "partition", w.part.String(), "epoch", w.epoch,
		"committed", w.committed(), "first_left", w.e.tr.CommitPoint(), "queued", w.q.len(), "err", stopped)
}

// loop is the batches' driver of the engine's step (enginestep.go): it
// reads the loop's state, asks the engine what to do, and does it.
func (w *worker) loop() error {
	if w.p.cfg.maxInFlight > 0 {
		return w.loopInFlight() // inflight.go
	}
	for {
		st := w.e.next(loopState{mode: w.mode.Load(), fenced: w.fenced.Load(), queued: w.q.len()}, time.Now())
		var err error
		switch st.then {
		case thenExit:
			return nil
		case thenFinish:
			if err := w.heldAtEnd(); err != nil {
				return err
			}
			return w.finishCommit()
		case thenCommit:
			err = w.commit()
		case thenBound:
			err = w.atBound(st.at)
		case thenWait:
			err = w.idle()
		case thenLoop:
			if recs := w.q.take(st.take); len(recs) > 0 {
				err = w.process(recs)
			}
		}
		if err != nil {
			return err
		}
	}
}

// atBound waits, at the policy's Max, for the commit due at at (a failed
// commit's retry), a stop that gives up or the end of the term. Records
// stay queued meanwhile; the queue's bound pauses the partition's fetching.
func (w *worker) atBound(at time.Time) error {
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.quit:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	return nil
}

// finishCommit commits what landed before a finishing worker exits,
// retrying a failed commit at its backoff until it lands, as running does:
// the range's end is reached only once it is committed. A stop that gives up
// (givingUp) or the end of the term ends the wait; the final commit in run
// then tries once more.
func (w *worker) finishCommit() error {
	for w.e.dirty() {
		if err := w.commit(); err != nil || !w.e.dirty() {
			return err
		}
		t := time.NewTimer(time.Until(w.e.retryAt))
		select {
		case <-t.C:
		case <-w.quit:
			t.Stop()
			return nil
		case <-w.ctx.Done():
			t.Stop()
			return w.ctx.Err()
		}
	}
	return nil
}

// idle waits for records, a stop, the next commit, or the time to
// dead-letter records held with no success after them (releaseIdle).
func (w *worker) idle() error {
	timer, stopCommit := w.timerAt(w.e.due())
	defer stopCommit()
	idleC, stopIdle := w.timerAt(w.e.idleAt())
	defer stopIdle()
	select {
	case <-w.q.ready:
	case <-w.wake:
	case <-w.ctx.Done():
		return w.ctx.Err()
	case <-timer:
		return w.commit()
	case <-idleC:
		return w.releaseIdle()
	}
	return nil
}

// timerAt is a channel that fires at at when ok (nil, never, when not),
// and the func that stops its timer.
func (w *worker) timerAt(at time.Time, ok bool) (<-chan time.Time, func()) {
	if !ok {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(at))
	return t.C, func() { t.Stop() }
}

func (w *worker) process(recs []*kgo.Record) error {
	w.begin(recs[0].Offset)
	recs, crash := crashPoint(w, recs)
	batch := w.buf[:0]
	var markers []int64 // transaction markers: no effect, landed once read
	for _, r := range recs {
		if err := w.e.read(r.Offset, r.LeaderEpoch); err != nil {
			return err
		}
		if r.Attrs.IsControl() {
			markers = append(markers, r.Offset)
			continue
		}
		batch = append(batch, w.sinkRecord(r))
	}
	w.buf = batch
	if len(batch) > 0 {
		w.beforeApply(batch)
		lossAt := w.lossCount()
		batch, results, err := w.applyFrom(batch, func(b []sink.Record, res []sink.Result) error {
			w.attempts += len(b)
			return w.land(b, res, 1, lossAt)
		})
		if ref := (*refused)(nil); errors.As(err, &ref) {
			return w.landBefore(batch, results, ref, lossAt)
		}
		if err != nil {
			return err
		}
		tries, err := w.retryPoison(batch, results)
		if err != nil {
			return err
		}
		w.attempts += len(batch)
		if err := w.land(batch, results, tries, lossAt); err != nil {
			return err
		}
	}
	if err := w.landMarkers(markers); err != nil {
		return err
	}
	if crash {
		w.crash(recs[len(recs)-1].Offset)
		return errFenced
	}
	return w.commitIfDue()
}

// begin starts the term's tracker at its first record, start.
func (w *worker) begin(start int64) {
	if w.e.begin(w.part, start) {
		w.p.stats.update(w.part, func(s *PartitionStats) { s.Start = start })
	}
}
