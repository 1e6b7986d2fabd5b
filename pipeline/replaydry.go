package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// Checker says what an Applier would do with a batch without doing it:
// Applied for a record whose business key the ledger lacks, Suppressed for
// one it holds, Err for one the sink would refuse. sink.Ledger.Check is one.
type Checker interface {
	// Check returns one Result per record of batch, at its index, writing
	// nothing; an error when the ledger could not be read.
	Check(ctx context.Context, batch []sink.Record) ([]sink.Result, error)
}

// DryRun reads the same records Run would (from each partition's checkpoint
// when an earlier run committed one inside its range) and asks chk about
// them, writing nothing: no checkpoint epoch, no ledger key, no effect. Its
// Progress counts, per partition, the records Run would apply and suppress
// if nothing else wrote to the ledger meanwhile; a key seen earlier in the
// dry run counts as suppressed, as Run would suppress it. Records are checked
// one fetch at a time on the reading goroutine, MaxBatch at most per call.
// Like Run it fails with ErrPlanChanged when an earlier run of the id stored
// other ranges; unlike Run it stores none.
func (r *Replay) DryRun(ctx context.Context, chk Checker) error {
	if !r.used.CompareAndSwap(false, true) {
		return errors.New("replay: Run or DryRun called twice")
	}
	if r.dlq != nil { // a dry run writes nothing, dead letters included
		r.dlq.close()
	}
	if p, ok, err := LoadPlan(ctx, r.rdb, r.cfg.replayPrefix, r.id, r.topic); err != nil {
		return fmt.Errorf("replay %q dry run: %w", r.id, err)
	} else if ok && !sameRanges(p.Ranges, r.ranges) {
		return fmt.Errorf("replay %q dry run of %s: %w: its first run (%s, given %q) stored %s, this one was given %s",
			r.id, r.topic, ErrPlanChanged, p.At.Format(time.RFC3339), p.Given, p, rangesString(r.ranges))
	}
	for _, rg := range r.ranges {
		part := checkpoint.Partition{Topic: r.topic, Partition: rg.Partition}
		pos, err := r.ckpt.Load(ctx, part)
		if err != nil {
			return fmt.Errorf("replay %q dry run: %w", r.id, err)
		}
		rp := r.addPart(rg, pos.Offset)
		rp.done.Store(rp.fed.Load())
		r.stats.update(part, func(s *PartitionStats) { s.Start, s.Landed = rp.begin, rp.begin })
	}
	cl, err := r.client()
	if err != nil {
		return err
	}
	r.cl = cl
	defer cl.Close()
	seen := make(map[string]struct{}) // keys this dry run counted as applied
	check := func(rp *replayPart, recs []*kgo.Record) error {
		part := checkpoint.Partition{Topic: r.topic, Partition: rp.rng.Partition}
		for len(recs) > 0 {
			n := min(len(recs), r.cfg.maxBatch)
			batch := make([]sink.Record, n)
			for i, rec := range recs[:n] {
				batch[i] = toSink(rec, 0, "", "")
			}
			res, err := chk.Check(ctx, batch)
			if err != nil {
				return fmt.Errorf("replay %q dry run: %s offsets %d..%d: %w", r.id, part, batch[0].Offset, batch[n-1].Offset, err)
			}
			var applied, suppressed, rejected int64
			for _, x := range res {
				switch {
				case x.Err != nil:
					rejected++
				case x.Outcome == sink.Applied:
					if _, dup := seen[x.Key]; dup {
						suppressed++
						continue
					}
					seen[x.Key] = struct{}{}
					applied++
				default:
					suppressed++
				}
			}
			next := batch[n-1].Offset + 1
			r.stats.update(part, func(s *PartitionStats) {
				s.Attempts += int64(n)
				s.Applied += applied
				s.Suppressed += suppressed
				s.DeadLettered += rejected // in a dry run: records that would be poison
				s.Landed = next
			})
			recs = recs[n:]
		}
		return nil
	}
	r.read(ctx, check, func(rp *replayPart) { rp.done.Store(true) })
	if err := r.Err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("replay %q dry run stopped before its end: %w", r.id, err)
	}
	return nil
}
