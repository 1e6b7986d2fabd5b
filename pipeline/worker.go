package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// stop modes, strongest last.
const (
	running  int32 = iota
	draining       // finish the queue, commit, exit (Close)
	revoking       // finish the in-flight batch, commit, exit (revoke)
)

// worker owns one partition for one term: its queue, tracker and commits.
// Everything but the atomics is touched by the worker goroutine alone.
type worker struct {
	p      *Pipeline
	part   checkpoint.Partition
	epoch  int64
	q      *queue
	ctx    context.Context // canceled when the partition is lost or the pipeline aborts
	cancel context.CancelFunc
	wake   chan struct{} // closed by stop
	done   chan struct{}

	mode   atomic.Int32
	fenced atomic.Bool // the term ended without this worker: no commit may land

	tr       *checkpoint.Tracker
	since    time.Time // when the oldest uncommitted record landed
	retryAt  time.Time // no commit before this, after a failed one
	failures int       // commits failed in a row
	attempts int
	buf      []sink.Record
}

func newWorker(p *Pipeline, part checkpoint.Partition, epoch int64) *worker {
	ctx, cancel := context.WithCancel(context.Background())
	tps := map[string][]int32{part.Topic: {part.Partition}}
	q := newQueue(p.cfg.queueRecords,
		func() { p.cl.PauseFetchPartitions(tps) },
		func() { p.cl.ResumeFetchPartitions(tps) })
	return &worker{p: p, part: part, epoch: epoch, q: q,
		ctx: ctx, cancel: cancel, wake: make(chan struct{}), done: make(chan struct{})}
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
			return
		}
	}
}

// kill ends the worker at once with no commit (lost partition, abort).
func (w *worker) kill() {
	w.fenced.Store(true)
	w.cancel()
	w.stop(revoking)
}

func (w *worker) run() {
	defer close(w.done)
	defer w.cancel()
	err := w.loop()
	if err == nil && w.ctx.Err() == nil {
		// The final commit of a revoke or drain. A worker fenced by the
		// revoke timeout tries too, and is refused (and counted) by the
		// store: that is the zombie's late commit.
		err = w.commit()
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, errFenced) {
		w.p.fail(err)
	}
}

func (w *worker) loop() error {
	maxBatch := w.p.cfg.maxBatch
	for {
		mode := w.mode.Load()
		if mode == revoking || w.fenced.Load() {
			return nil
		}
		landed := 0
		if w.tr != nil {
			landed = w.tr.LandedSinceCommit()
		}
		n := w.p.cfg.policy.Room(landed, maxBatch)
		recs := w.q.take(n)
		if len(recs) == 0 {
			if mode == draining {
				return nil
			}
			if err := w.idle(); err != nil {
				return err
			}
			continue
		}
		if err := w.process(recs); err != nil {
			return err
		}
	}
}

// idle waits for records, a stop, or the next commit.
func (w *worker) idle() error {
	var timer <-chan time.Time
	if at, ok := w.nextCommit(); ok {
		t := time.NewTimer(time.Until(at))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-w.q.ready:
	case <-w.wake:
	case <-w.ctx.Done():
		return w.ctx.Err()
	case <-timer:
		return w.commit()
	}
	return nil
}

func (w *worker) process(recs []*kgo.Record) error {
	if w.tr == nil {
		w.tr = checkpoint.NewTracker(w.part, recs[0].Offset)
	}
	crash := false
	if k, ok := w.p.cfg.crash[w.part]; ok && w.attempts+len(recs) >= k {
		recs, crash = recs[:k-w.attempts], true
	}
	batch := w.buf[:0]
	for _, r := range recs {
		if err := w.tr.Start(r.Offset); err != nil {
			return err
		}
		batch = append(batch, toSink(r, w.epoch))
	}
	w.buf = batch
	if h := w.p.cfg.hooks.BeforeApply; h != nil {
		h(w.ctx, w.part, w.epoch, batch)
	}
	results, err := w.apply(batch)
	if err != nil {
		return err
	}
	w.attempts += len(batch)
	if err := w.land(batch, results); err != nil {
		return err
	}
	if crash {
		w.fenced.Store(true)
		w.p.store.Release(w.part, w.epoch)
		w.p.stats.update(w.part, func(s *PartitionStats) { s.Crashed, s.Held = true, false })
		w.p.emit(Event{Kind: Crashed, Partition: w.part, Epoch: w.epoch, Offset: batch[len(batch)-1].Offset,
			Err: fmt.Errorf("%s epoch %d after %d attempts: %w", w.part, w.epoch, w.attempts, ErrInjectedCrash)})
		return errFenced
	}
	if at, ok := w.nextCommit(); ok && !at.After(time.Now()) {
		return w.commit()
	}
	return nil
}

// nextCommit says when the policy wants the next commit, no earlier than the
// backoff after a failed one; false when nothing waits to be committed.
func (w *worker) nextCommit() (time.Time, bool) {
	if w.tr == nil || !w.tr.Dirty() {
		return time.Time{}, false
	}
	pol := w.p.cfg.policy
	var at time.Time
	switch {
	case pol.Every > 0 && w.tr.LandedSinceCommit() >= pol.Every:
		at = w.since
	case pol.Interval > 0:
		at = w.since.Add(pol.Interval)
	default:
		return time.Time{}, false
	}
	if w.retryAt.After(at) {
		at = w.retryAt
	}
	return at, true
}

// apply runs the batch's effects, again and again while their outcome is
// unknown: the sink's claims are idempotent, so a retry never applies twice.
func (w *worker) apply(batch []sink.Record) ([]sink.Result, error) {
	backoff := 100 * time.Millisecond
	for {
		results, err := w.p.cfg.applier.Apply(w.ctx, batch)
		if err == nil && len(results) != len(batch) {
			return nil, fmt.Errorf("%s: sink returned %d results for %d records", w.part, len(results), len(batch))
		}
		if err == nil {
			err = transient(results)
		}
		if err == nil {
			return results, nil
		}
		if w.ctx.Err() != nil {
			return nil, w.ctx.Err()
		}
		if w.fenced.Load() {
			return nil, errFenced
		}
		w.p.cfg.logger.Warn("sink failed, retrying the batch; its offsets stay uncommitted",
			"partition", w.part.String(), "epoch", w.epoch, "first_offset", batch[0].Offset,
			"last_offset", batch[len(batch)-1].Offset, "retry_in", backoff, "err", err)
		select {
		case <-time.After(backoff):
		case <-w.ctx.Done():
			return nil, w.ctx.Err()
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// transient returns the first per-record error that says nothing about the
// record itself (a Redis error reply such as OOM): the batch's effects are then
// unknown and it must be applied again, not skipped past.
func transient(results []sink.Result) error {
	for _, r := range results {
		if r.Err != nil && !badRecord(r.Err) {
			return r.Err
		}
	}
	return nil
}

// badRecord reports whether err is the record's own fault, for the bad-record
// policy.
func badRecord(err error) bool {
	return errors.Is(err, sink.ErrNoKey) || errors.Is(err, sink.ErrBadValue) || errors.Is(err, sink.ErrCrossSlot)
}

// land marks known effects landed and counts them. A refused record stops the
// partition under the Stop policy, before it is landed.
func (w *worker) land(batch []sink.Record, results []sink.Result) error {
	var applied, suppressed, rejected int64
	var bad error
	for i, res := range results {
		off := batch[i].Offset
		if res.Err != nil {
			if w.p.cfg.badRecords == Stop {
				if bad == nil {
					bad = fmt.Errorf("%s epoch %d offset %d: %w: %w", w.part, w.epoch, off, ErrBadRecord, res.Err)
				}
				continue
			}
			rejected++
			w.p.cfg.logger.Warn("skipping bad record", "partition", w.part.String(), "offset", off, "err", res.Err)
			w.p.emit(Event{Kind: Rejected, Partition: w.part, Epoch: w.epoch, Offset: off, Err: res.Err})
		} else if res.Outcome == sink.Applied {
			applied++
		} else {
			suppressed++
		}
		if err := w.tr.Land(off); err != nil {
			return err
		}
	}
	if w.tr.LandedSinceCommit() > 0 && w.since.IsZero() {
		w.since = time.Now()
	}
	n := int64(len(batch))
	w.p.stats.update(w.part, func(s *PartitionStats) {
		s.Attempts += n
		s.Applied += applied
		s.Suppressed += suppressed
		s.Rejected += rejected
	})
	return bad
}

// commit moves the partition's offset to the tracker's commit point.
//
// A refusal by the local fence (the term was released) ends the worker. A
// refusal by the broker while the term is still held here, or any other
// retriable failure, is retried with backoff at the next commit point:
// franz-go reports a real loss of membership through onLost, which releases
// the term. A non-retriable broker error (authorisation, say) stops the
// pipeline.
func (w *worker) commit() error {
	if w.tr == nil || !w.tr.Dirty() {
		return nil
	}
	if err := w.ctx.Err(); err != nil {
		return err // lost or aborted: no commit of this term may land
	}
	point := w.tr.CommitPoint()
	ctx, cancel := context.WithTimeout(context.Background(), w.p.cfg.commitTimeout)
	defer cancel()
	err := w.p.store.Commit(ctx, w.part, w.epoch, point)
	if err == nil {
		w.tr.Committed(point)
		w.since, w.retryAt, w.failures = time.Time{}, time.Time{}, 0
		w.p.stats.update(w.part, func(s *PartitionStats) { s.Committed = point })
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
		w.fenced.Store(true)
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
	w.failures++
	backoff := min(50*time.Millisecond<<min(w.failures, 7), 5*time.Second)
	w.retryAt = time.Now().Add(backoff)
	w.p.cfg.logger.Warn("commit failed; retrying", "partition", w.part.String(), "epoch", w.epoch,
		"offset", point, "failures", w.failures, "retry_in", backoff, "err", err)
	return nil
}

func toSink(r *kgo.Record, epoch int64) sink.Record {
	s := sink.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Epoch: epoch,
		Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
	if len(r.Headers) > 0 {
		s.Headers = make([]sink.Header, len(r.Headers))
		for i, h := range r.Headers {
			s.Headers[i] = sink.Header{Key: h.Key, Value: h.Value}
		}
	}
	return s
}
