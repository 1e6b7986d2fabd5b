package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/shardpipe/shardpipe/sink"
)

// CommitMarker keeps, per consumer group and partition, the highest offset
// the group ever sent a commit at (sink.CommitMarks keeps it in Redis).
type CommitMarker interface {
	// Raise records that group sends a commit of the partition at offset
	// (the mark never goes down).
	Raise(ctx context.Context, group, topic string, partition int32, offset int64) error
	// Highest returns the mark, -1 when the group has none.
	Highest(ctx context.Context, group, topic string, partition int32) (int64, error)
}

// loadMark reads the group's commit mark of the partition at the term's
// start, retrying with backoff until it answers or the term ends; -1
// without CountOnce.
func (w *worker) loadMark() error {
	w.e.mark = -1
	m := w.p.cfg.marks
	if m == nil || w.p.cfg.group == "" {
		return nil
	}
	for retry := 1; ; retry++ {
		ctx, cancel := context.WithTimeout(w.ctx, w.p.cfg.commitTimeout)
		off, err := m.Highest(ctx, w.p.cfg.group, w.part.Topic, w.part.Partition)
		cancel()
		if err == nil {
			w.e.mark = off
			return nil
		}
		if errors.Is(err, sink.ErrMisconfigured) {
			return fmt.Errorf("%s epoch %d: %w", w.part, w.epoch, err) // no retry fixes it
		}
		w.warn("reading the group's commit mark failed, retrying before applying anything", "err", err)
		if err := w.sleepOrStop(w.p.cfg.retry.Ceiling(retry)); err != nil {
			return err
		}
		if givingUp(w.mode.Load()) {
			w.e.mark = math.MaxInt64 // stopping unread: credit no Redelivered record rather than one twice
			return nil
		}
	}
}

// raiseMark raises the group's commit mark to point before the commit is
// sent, and counts the records below it (CountOnce): whatever becomes of
// the commit's reply, this process counted them and the group's later
// owners will not. Without CountOnce it does nothing: the commit's success
// counts them.
func (w *worker) raiseMark(ctx context.Context, point int64) error {
	m := w.p.cfg.marks
	if m == nil || w.p.cfg.group == "" {
		return nil
	}
	if err := m.Raise(ctx, w.p.cfg.group, w.part.Topic, w.part.Partition, point); err != nil {
		// Counting never holds a commit back (Redis may be down while the
		// effects before point have landed): these records are counted on
		// the commit's success instead, as without CountOnce.
		w.warn("raising the group's commit mark failed; committing anyway (a reset-offsets back over these records may count them again)",
			"offset", point, "err", err)
		return nil
	}
	w.countCommitted(point)
	return nil
}
