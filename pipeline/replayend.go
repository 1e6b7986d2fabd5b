package pipeline

import (
	"context"
)

// stopWorkers asks every worker to finish its batch in flight, commit and
// stop, as Pipeline.shutdown does: within ShutdownTimeout in all. A worker
// still busy then (its sink or dead-letter write retrying through an outage,
// which only its own context or a fence ends) is killed: it stops at once
// with no commit, so its offset stays before the records it had not landed.
// It returns when every worker has ended.
func (r *Replay) stopWorkers(ws []*worker) {
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.shutdown)
	defer cancel()
	deadline, _ := ctx.Deadline()
	for _, w := range ws {
		w.grant(deadline)
		w.stop(revoking)
	}
	for _, w := range ws {
		select {
		case <-w.done:
			continue
		case <-ctx.Done():
		}
		r.cfg.logger.Warn("replay shutdown timeout: abandoning a partition without its final commit",
			"id", r.id, "partition", w.part.String(), "epoch", w.epoch, "queued", w.q.len(), "timeout", r.cfg.shutdown)
		w.kill()
		<-w.done
	}
}

// reachedEnd says whether a partition's worker, now ended, finished its
// range: the whole range was fed, the worker was neither fenced nor killed,
// every record fed landed (the commit point reached the offset after the
// last one fed, which is the range's end but for trailing control records),
// and the final commit stored that point. A worker stopped by an error
// (a poison record under Stop, a misconfigured sink) leaves its commit point
// before the record it could not land, so it is not done.
func (r *Replay) reachedEnd(rp *replayPart, w *worker) bool {
	if !rp.fed.Load() || w.fenced.Load() {
		return false
	}
	end := max(rp.begin, rp.fedTo.Load())
	ok := false
	r.stats.update(w.part, func(s *PartitionStats) {
		ok = s.Landed >= end && (s.Landed <= rp.begin || s.Committed >= s.Landed)
	})
	return ok
}
