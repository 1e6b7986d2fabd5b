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
		if errors.Is(err, sink.ErrMisconfigured) {
			// No retry can fix it and skipping would lose effects: stop.
			return nil, fmt.Errorf("%s epoch %d offsets %d..%d: %w", w.part, w.epoch,
				batch[0].Offset, batch[len(batch)-1].Offset, err)
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
	n, point := int64(len(batch)), w.tr.CommitPoint()
	w.p.stats.update(w.part, func(s *PartitionStats) {
		s.Landed = point
		s.Attempts += n
		s.Applied += applied
		s.Suppressed += suppressed
		s.Rejected += rejected
	})
	return bad
}

func toSink(r *kgo.Record, epoch int64, member string) sink.Record {
	s := sink.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Epoch: epoch, Member: member,
		Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
	if len(r.Headers) > 0 {
		s.Headers = make([]sink.Header, len(r.Headers))
		for i, h := range r.Headers {
			s.Headers[i] = sink.Header{Key: h.Key, Value: h.Value}
		}
	}
	return s
}
