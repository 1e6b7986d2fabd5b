package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// onAssigned starts a worker per new partition, fenced at the epoch this
// assignment came with. Partitions kept from an earlier membership (see
// renewTerms) get new terms too.
func (p *Pipeline) onAssigned(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) {
	<-p.ready
	member, gen := cl.GroupMetadata()
	epoch := int64(gen)
	assigned = p.renewTerms(ctx, cl, member, assigned)
	p.mu.Lock()
	defer p.mu.Unlock()
	for topic, parts := range assigned {
		for _, n := range parts {
			part := checkpoint.Partition{Topic: topic, Partition: n}
			if old := p.workers[part]; old != nil { // should not happen; fence the old term
				old.kill()
			}
			p.kafka.Assign(part, epoch)
			w := newWorker(&p.runner, part, epoch, member)
			p.workers[part] = w
			p.stats.update(part, func(s *PartitionStats) {
				s.Epoch, s.Held, s.TermFenced, s.CommitFailures, s.BusySince = epoch, true, false, 0, time.Time{}
			})
			go w.run()
			p.emit(Event{Kind: Assigned, Partition: part, Epoch: epoch})
		}
		// A pause left from an earlier term of these partitions must not
		// stall the new one.
		cl.ResumeFetchPartitions(map[string][]int32{topic: parts})
	}
	if len(assigned) > 0 {
		p.cfg.logger.Info("partitions assigned", "epoch", epoch, "member", member, "partitions", assigned)
	}
}

// onRevoked lets each revoked partition's worker finish its in-flight batch
// and commit, then closes the term. A worker that misses the revoke timeout
// is fenced: it may still finish its batch (the ledger suppresses what the new
// owner already applied) but it can no longer commit. A term of an earlier
// membership (franz-go rejoined as a new member) ends as lost.
func (p *Pipeline) onRevoked(_ context.Context, cl *kgo.Client, revoked map[string][]int32) {
	member, _ := cl.GroupMetadata()
	p.endTerms(revoked, false, member)
}

// onLost stops each lost partition's worker without a commit.
func (p *Pipeline) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	p.endTerms(lost, true, "")
}

// endTerms ends the terms of parts: revoked (a final commit), or lost (none).
// member, when given, is the client's member ID now: a term assigned to
// another member ID ended with that membership and is lost whatever the
// callback, since the group may have given its partitions to another member
// meanwhile.
func (p *Pipeline) endTerms(parts map[string][]int32, lost bool, member string) {
	<-p.ready
	p.mu.Lock()
	aborted := p.aborted
	lost = lost || aborted
	var ws []*worker
	for topic, ns := range parts {
		for _, n := range ns {
			part := checkpoint.Partition{Topic: topic, Partition: n}
			if w := p.workers[part]; w != nil {
				ws = append(ws, w)
				delete(p.workers, part)
			} else if held, ok := p.store.Held(part); ok {
				p.store.Release(part, held.Epoch)
			}
		}
	}
	p.mu.Unlock()

	deadline, cancel := context.WithTimeout(context.Background(), p.cfg.revokeTimeout)
	defer cancel()
	by, _ := deadline.Deadline()
	var wg sync.WaitGroup
	anyLost := false
	for _, w := range ws {
		wl := lost || member != "" && w.member != member
		anyLost = anyLost || wl
		kind := Revoked
		if wl {
			kind = Lost
		}
		// A worker killed before (abandoned at the shutdown timeout, or by
		// Abort) is not waited for again: what it still does, finishing
		// its unknown batch, it does without holding up the rebalance or
		// the client's Close.
		abandoned := w.ctx.Err() != nil
		if !aborted && !abandoned {
			w.grant(by) // an unknown batch's effects are marked done within the wait
		}
		if wl {
			// Fence first, so not even an in-flight commit of the old
			// term can land after this returns.
			w.kill()
			p.store.Release(w.part, w.epoch)
		} else {
			w.stop(revoking)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !abandoned {
				select {
				case <-w.done:
				case <-deadline.Done():
					if w.finishing.Load() {
						p.cfg.logger.Warn("revoke timeout: the partition moves on while its old worker, its final commit made, still marks done effects that ran (until their leases would lapse)",
							"partition", w.part.String(), "epoch", w.epoch)
					} else {
						p.cfg.logger.Warn("revoke timeout: fencing a worker still holding a batch",
							"partition", w.part.String(), "epoch", w.epoch)
					}
					w.fence() // also ends a dead-letter write waiting or under way
				}
			}
			p.store.Release(w.part, w.epoch)
			p.stats.update(w.part, func(s *PartitionStats) { s.Held = false })
			p.emit(Event{Kind: kind, Partition: w.part, Epoch: w.epoch})
		}()
	}
	wg.Wait()
	switch {
	case len(ws) == 0:
	case member != "" && anyLost && !lost:
		p.cfg.logger.Info("partitions lost", "partitions", parts,
			"why", "revoked after the client rejoined the group as a new member: the old member's terms ended with it")
	case anyLost:
		p.cfg.logger.Info("partitions lost", "partitions", parts)
	default:
		p.cfg.logger.Info("partitions revoked", "partitions", parts)
	}
}
