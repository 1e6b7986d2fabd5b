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

// CountOnce makes PartitionStats.Applied count each record once over the
// group's life, summed over its processes: a worker raises m's mark to a
// commit point before it sends the commit, and counts the records below
// it then, so a commit whose reply was lost is counted by the process
// that sent it; a record the group reads again below the mark (after
// reset-offsets moved back) whose claim names it (Redelivered) is not
// counted again, only Suppressed. A record whose key had to be applied
// again (its claim expired) is counted: its effect ran again. It costs one
// Raise per commit and one Highest per term (retried until it answers or
// the term ends); a Raise that fails holds no commit back (its records
// are then counted on the commit's success, as without it). Without it,
// Applied counts on the commit's success and after reset-offsets counts
// again. Replays do not use it.
func CountOnce(m CommitMarker) GroupOpt { return groupOpt(func(c *config) { c.marks = m }) }

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
