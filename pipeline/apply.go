package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/sink"
)

// apply runs the batch's effects, again and again while their outcome is
// unknown: the sink's claims are idempotent, so a retry never applies twice.
// The engine judges each failed attempt (onFailure, as for MaxInFlight):
// the backoff (config.retry) doubles from 100ms to 5s and the warning is
// rate limited, so a Redis outage costs a few calls and one log line every
// few seconds per partition; the commit point stays before the batch
// meanwhile. A record whose effect failed (ErrEffectFailed) EffectAttempts
// times is given up: its result keeps the failure (givenUp), which the
// worker then takes down the storm path. A replay's worker finishing its
// range (finishing) retries as a running one does: the range is not done
// until its last batch lands. Once the worker is asked to stop (revoke or
// shutdown) a failed batch is not retried again: the engine keeps it as
// left (its effects may have run) and apply returns errLeft, so that the
// worker commits what landed before the batch instead of retrying until
// its time is up. A batch it returns an error for is finished at the
// worker's exit (finishUnknown).
func (w *worker) apply(batch []sink.Record) ([]sink.Result, error) {
	_, results, err := w.applyFrom(batch, nil)
	return results, err
}

// applyFrom is apply that applies again only the records whose outcome
// is unknown, from the first of them (a sink that returns a result per
// record, as Guarded does, when a record fails part-way): the records
// before it keep their results. Given landPrefix, it lands the settled
// records before that one (up to the first poison record) and commits what
// landed when the policy wants a commit, however long the record is
// retried: a receiver that fails now and then does not cost the whole
// batch again nor hold back its commits. A record's attempts, and its
// backoff, are its own (failCounts): a failure of unknown outcome does not
// count against EffectAttempts, and a record not attempted because one
// before it failed is applied at once once that one is given up.
// It returns the records it did not land this way, with their results.
func (w *worker) applyFrom(batch []sink.Record, landPrefix func([]sink.Record, []sink.Result) error) (rest []sink.Record, _ []sink.Result, err error) {
	defer func() {
		if err != nil && !errors.Is(err, errLeft) {
			w.e.leave(err, batch...) // its effects may have run: finished at exit
		}
	}()
	var results []sink.Result // batch's; those of batch[:from] are settled
	var fails failTally
	from := 0
	for {
		done := w.roundTrip()
		res, err := w.p.cfg.applier.Apply(w.applyCtx(), batch[from:])
		if err == nil && len(res) != len(batch)-from {
			err = fmt.Errorf("%s: sink returned %d results for %d records", w.part, len(res), len(batch)-from)
			done(err)
			return nil, nil, err
		}
		at, kind, attempts, own := -1, failUnknown, 0, 0
		if err == nil {
			if results == nil {
				results = res
			} else {
				copy(results[from:], res)
			}
			at, kind, attempts, own, err = w.unsettled(batch, results, from, &fails)
		} else {
			if errors.Is(err, sink.ErrMisconfigured) {
				kind = failMisconfigured
			}
			attempts, own = fails.note(batch[from].Offset, kind)
		}
		if d := done(err); w.p.cfg.meter != nil {
			w.p.cfg.meter.SinkRoundTrip(w.part, len(batch)-from, d, err)
		}
		if err == nil {
			return batch, results, nil
		}
		// Not attempted: a record before it failed, and is given up. It is
		// applied at once, its first attempt, unless the term stops.
		notTried := attempts == 0
		act, wait := actRetry, time.Duration(0)
		if !notTried {
			act, wait = w.e.onFailure(kind, attempts, own, givingUp(w.mode.Load()))
		} else if givingUp(w.mode.Load()) {
			act = actLeave
		}
		if act == actStop {
			// No retry can fix it and skipping would lose effects: stop.
			if at >= 0 {
				return batch, results, &refused{at: at, err: w.recordError(&batch[at], attempts, sink.ErrMisconfigured, err)}
			}
			return nil, nil, fmt.Errorf("%s epoch %d offsets %d..%d: %w", w.part, w.epoch,
				batch[from].Offset, batch[len(batch)-1].Offset, err)
		}
		if at >= 0 {
			from = at // the records before it are settled
		}
		if n := knownPrefix(results, from); landPrefix != nil && n > 0 {
			if err := landPrefix(batch[:n], results[:n]); err != nil {
				return nil, nil, err
			}
			batch, results, from = batch[n:], results[n:], from-n
		}
		if w.ctx.Err() != nil {
			return nil, nil, w.ctx.Err()
		}
		if w.fenced.Load() {
			return nil, nil, errFenced
		}
		if act == actLeave {
			w.e.leave(err, batch...)
			return nil, nil, errLeft
		}
		if notTried {
			continue
		}
		if landPrefix != nil {
			// What landed before the failing record is committed when due,
			// however long it is retried.
			if err := w.commitIfDue(); err != nil {
				return nil, nil, err
			}
		}
		w.warn("sink failed, retrying the batch; its offsets stay uncommitted",
			"first_offset", batch[from].Offset, "last_offset", batch[len(batch)-1].Offset, "attempts", attempts,
			"committed", w.committed(), "retry_in", wait, "err", err)
		if err := w.sleepOrStop(wait); err != nil {
			return nil, nil, err
		}
		if givingUp(w.mode.Load()) {
			w.e.leave(err, batch...)
			return nil, nil, errLeft
		}
	}
}

// unsettled finds the first record of results, from index from on, whose
// outcome is unknown (transient), after counting the failed attempt of
// each record it meets (fails) and giving up, as the engine judges them
// (onFailure), those whose effect failed for the last time: their results
// become givenUp, the records' own failures. It returns that record's
// index, its failure, its failed attempts in all and of that kind (0 and
// 0: it was not attempted, as a record after a failing one is not) and
// the error; -1 and nil when every outcome is known.
func (w *worker) unsettled(batch []sink.Record, results []sink.Result, from int, fails *failTally) (int, failure, int, int, error) {
	for {
		i, err := transient(results[from:])
		if err == nil {
			return -1, failUnknown, 0, 0, nil
		}
		at, kind := from+i, classify(err)
		if errors.Is(err, errNotAttempted) {
			return at, kind, 0, 0, err
		}
		attempts, own := fails.note(batch[at].Offset, kind)
		if act, _ := w.e.onFailure(kind, attempts, own, false); kind != failEffect || act != actForGood {
			return at, kind, attempts, own, err
		}
		results[at].Err = &givenUp{attempts: attempts, err: err}
	}
}

// failTally is a batch's failCounts, by offset: made at its first failure.
type failTally map[int64]*failCounts

// note counts a failed attempt of kind of the record at off (failCounts.note).
func (t *failTally) note(off int64, kind failure) (attempts, own int) {
	if *t == nil {
		*t = failTally{}
	}
	c := (*t)[off]
	if c == nil {
		c = new(failCounts)
		(*t)[off] = c
	}
	return c.note(kind)
}

// knownPrefix is how many results before index at (the first whose
// outcome is unknown; -1: the sink returned none) are settled: succeeded,
// or failed for good (refused, or given up: for the storm path), with no
// poison record among them (a poison record is applied again after the
// batch: retryPoison): the records a retry need not apply again.
func knownPrefix(results []sink.Result, at int) int {
	n := 0
	for n < at && (results[n].Err == nil || classify(results[n].Err) == failRefused) {
		n++
	}
	return n
}

// sleep waits d, or fails when the worker's term ends first.
func (w *worker) sleep(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	if w.fenced.Load() {
		return errFenced
	}
	return nil
}

// sleepOrStop is sleep that also ends, with no error, when the worker is
// asked to stop and give up (givingUp): the caller then sees the stop and
// gives up its retries. A replay's finishing is no such stop.
func (w *worker) sleepOrStop(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.quit:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	if w.fenced.Load() {
		return errFenced
	}
	return nil
}

// warn logs a retry warning for the partition at most once every
// warnEvery, counting the retries it did not log.
func (w *worker) warn(msg string, attrs ...any) {
	if time.Since(w.lastWarn) < warnEvery {
		w.unlogged++
		return
	}
	w.lastWarn = time.Now()
	attrs = append([]any{"partition", w.part.String(), "epoch", w.epoch, "unlogged_retries", w.unlogged}, attrs...)
	w.unlogged = 0
	w.p.cfg.logger.Warn(msg, attrs...)
}

// warnEvery is the least time between two retry warnings of one partition.
const warnEvery = 5 * time.Second

// committed returns the partition's committed offset, for messages
// (engine.committedOffset).
func (w *worker) committed() int64 { return w.e.committedOffset() }

// transient returns the first per-record error that says nothing about the
// record itself (a Redis error reply such as OOM, or ErrMisconfigured), and
// its index: the batch's effects are then unknown and it must be applied
// again, not skipped past, or the partition stops there.
func transient(results []sink.Result) (int, error) {
	for i, r := range results {
		if r.Err != nil && !ownFailure(r.Err) {
			return i, r.Err
		}
	}
	return -1, nil
}

// refused is a per-record refusal no retry can fix (ErrMisconfigured) at
// index at of a batch whose other results are known: the records before it
// land, and the partition stops there.
type refused struct {
	at  int
	err error
}

func (e *refused) Error() string { return e.err.Error() }
func (e *refused) Unwrap() error { return e.err }

// landBefore lands the records of batch before the refused one, up to the
// first that has an error of its own, and returns the refusal: the final
// commit then covers every record whose effect is known to have landed.
func (w *worker) landBefore(batch []sink.Record, results []sink.Result, ref *refused, lossAt uint64) error {
	n := 0
	for n < ref.at && results[n].Err == nil {
		n++
	}
	if n > 0 {
		if err := w.land(batch[:n], results[:n], 1, lossAt); err != nil {
			return errors.Join(ref, err)
		}
	}
	return ref
}

// ownFailure reports whether err is the record's own failure, not one of
// the sink: a poison record, or an effect that refused it or was given up.
func ownFailure(err error) bool {
	k := classify(err)
	return k == failPoison || k == failRefused
}

// refusedEffect reports whether err is an effect's refusal of the record
// that no retry can change (sink.ErrRejected).
func refusedEffect(err error) bool {
	return errors.Is(err, ErrEffectFailed) && errors.Is(err, sink.ErrRejected)
}

// badRecord reports whether err is the record's own fault: a poison record.
func badRecord(err error) bool {
	return errors.Is(err, sink.ErrNoKey) || errors.Is(err, sink.ErrBadValue) || errors.Is(err, sink.ErrCrossSlot)
}

// land marks known effects landed and counts them; the records first
// started when the loss count was lossAt (reapply.go). A poison record
// (its attempts spent) takes the storm path (failedForGood: held until a
// later record succeeds, then dead-lettered), or stops the partition,
// unlanded, when no DeadLetters are configured. A success first releases
// the partition's held records.
func (w *worker) land(batch []sink.Record, results []sink.Result, attempts int, lossAt uint64) error {
	var claimed, suppressed, redelivered int64
	var bad error
	seen := 0 // records met, whose spans end below
	defer func() { w.endSpans(batch[:seen], results) }()
	now := time.Now()
	for i, res := range results {
		seen = i + 1
		if res.Err != nil {
			tries := attempts
			if g := (*givenUp)(nil); errors.As(res.Err, &g) {
				tries = g.attempts
			}
			if effect := errors.Is(res.Err, ErrEffectFailed); w.p.dlq == nil || effect && w.p.cfg.stopOnEffectFailure {
				if bad == nil {
					kind := ErrPoison
					if effect {
						kind = ErrEffectFailed
					}
					bad = w.recordError(&batch[i], tries, kind, res.Err)
				}
				continue
			}
			if err := w.failedForGood(&batch[i], res.Err, tries); err != nil {
				bad = err // the counts below still cover what landed before it
				break
			}
			continue // held: unlanded until a later record succeeds
		}
		if err := w.succeeded(batch[i].Offset); err != nil {
			bad = err // the counts below still cover what landed before it
			break
		}
		switch res.Outcome {
		case sink.Applied:
			claimed++
			if m := w.p.cfg.meter; m != nil {
				m.Applied(w.part, batch[i].Timestamp)
			}
		case sink.Redelivered:
			redelivered++
			suppressed++
		default:
			suppressed++
		}
		if err := w.e.landed(&batch[i], res, lossAt, now); err != nil {
			return err
		}
	}
	n, point := int64(len(batch)), w.e.tr.CommitPoint()
	w.p.stats.update(w.part, func(s *PartitionStats) {
		s.Landed = point
		s.Attempts += n
		s.Claimed += claimed
		s.Suppressed += suppressed
		s.Redelivered += redelivered
	})
	return bad
}

// countCommitted moves the records below point that credit this pass from
// the engine's uncounted into PartitionStats.Applied: a commit moved past
// them (or, with CountOnce, is sent past them).
func (w *worker) countCommitted(point int64) {
	if n := w.e.countBelow(point); n > 0 {
		w.p.stats.update(w.part, func(s *PartitionStats) { s.Applied += int64(n) })
	}
}

func toSink(r *kgo.Record, epoch int64, member, group string) sink.Record {
	s := sink.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Epoch: epoch, Member: member,
		Group: group, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
	if len(r.Headers) > 0 {
		s.Headers = make([]sink.Header, len(r.Headers))
		for i, h := range r.Headers {
			s.Headers[i] = sink.Header{Key: h.Key, Value: h.Value}
		}
	}
	return s
}
