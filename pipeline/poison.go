package pipeline

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// retryPoison applies the batch's poison records again, on their own, as
// the engine judges them (onFailure, as for MaxInFlight): with a backoff
// (config.poison) doubling from 100ms to 2s, until they decode or
// PoisonAttempts are spent, or the worker is asked to stop and give up
// (givingUp): then no attempt is left in this term and they fail for good
// at once. It returns the attempts made.
func (w *worker) retryPoison(batch []sink.Record, results []sink.Result) (int, error) {
	for attempts := 1; ; attempts++ {
		var idx []int
		for i := range results {
			if results[i].Err != nil && classify(results[i].Err) == failPoison {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			return attempts, nil
		}
		act, wait := w.e.onFailure(failPoison, attempts, attempts, givingUp(w.mode.Load()))
		if act != actRetry {
			return attempts, nil
		}
		if err := w.sleepOrStop(wait); err != nil {
			return 0, err
		}
		if givingUp(w.mode.Load()) {
			return attempts, nil // stopped while backing off: the attempts made are all
		}
		sub := make([]sink.Record, len(idx))
		for j, i := range idx {
			sub[j] = batch[i]
		}
		res, err := w.apply(sub)
		if re := (*RecordError)(nil); errors.As(err, &re) {
			re.Attempts = attempts + 1 // a refusal at this attempt
		}
		if err != nil {
			return 0, err
		}
		for j, i := range idx {
			results[i] = res[j]
		}
	}
}

// deadLetter delivers r to its dead-letter topic (or, too large for it, a
// placeholder: reported as dlqWritten), retrying failures (Redis or Kafka
// down) with a backoff (config.retry) doubling from 100ms to 5s
// until it lands or the term ends (errFenced once fenced, even
// mid-delivery). A failure no retry can fix (judgeDLQ) returns a
// *RecordError wrapping ErrDeadLetter and the cause, and stops the pipeline
// with r unlanded.
func (w *worker) deadLetter(r *sink.Record, cause error, attempts int) (dlqOutcome, error) {
	giveUp := dlqGiveUp{grace: w.p.dlq.cfg.lease}
	for retry := 1; ; retry++ {
		if w.fenced.Load() {
			return 0, errFenced // the term is over: the next owner dead-letters it
		}
		out, err := w.p.dlq.deliver(w.term, w.owner(), r, cause, attempts)
		if err == nil {
			attrs := []any{"partition", w.part.String(), "epoch", w.epoch,
				"offset", r.Offset, "attempts", attempts, "replay", out == dlqReplayed, "err", errorText(cause)}
			if out == dlqPlaceholder { // landed as written: the placeholder names the record
				out = dlqWritten
				attrs = append(attrs, "placeholder", "too large for the dead-letter topic: a placeholder naming its offset was written in its place")
			}
			w.p.cfg.logger.Warn("poison record dead-lettered", attrs...)
			w.p.emit(Event{Kind: DeadLettered, Partition: w.part, Epoch: w.epoch, Offset: r.Offset, Err: cause})
			return out, nil
		}
		if w.ctx.Err() != nil {
			return 0, w.ctx.Err()
		}
		if w.fenced.Load() {
			return 0, errFenced
		}
		if giveUp.stop(err, time.Now()) {
			return 0, w.recordError(r, attempts, ErrDeadLetter, fmt.Errorf("%w (poison: %s)", err, errorText(cause)))
		}
		backoff := w.p.cfg.retry.Ceiling(retry)
		w.warn("dead-letter write failed, retrying; the offset stays uncommitted",
			"offset", r.Offset, "committed", w.committed(), "retry_in", backoff, "err", err)
		if err := w.sleep(backoff); err != nil {
			return 0, err
		}
	}
}

// recordError is the error that stops the run on r, after attempts sink
// calls: kind says what stopped it, cause why.
func (w *worker) recordError(r *sink.Record, attempts int, kind, cause error) *RecordError {
	return &RecordError{Topic: w.part.Topic, Partition: w.part.Partition, Epoch: w.epoch, Offset: r.Offset,
		Attempts: attempts, Err: kind, Cause: cause}
}

// owner names this term in dead-letter markers.
func (w *worker) owner() string { return w.member + "/" + strconv.FormatInt(w.epoch, 10) }
