package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// replayMember starts the member and the group a replay's ledger claims
// name: + id.
const replayMember = "replay:"

// DefaultReplayPrefix starts the Redis key of a replay's checkpoint:
// prefix + id + ":" + topic + ":" + partition.
const DefaultReplayPrefix = "shardpipe:replay:"

// Replay reads fixed ranges of one topic's partitions again and lands every
// record through the sink, for recovery: keys the ledger holds are
// suppressed, missing ones applied. It reads by direct partition assignment,
// in no consumer group, so a live group on the topic is not disturbed. Each
// partition runs in a worker of its own with the same tracker, commit policy
// and sink handling as Pipeline.
//
// Its progress is a checkpoint.Redis position per partition under the replay
// id (CheckpointPrefix + id + ":" + topic + ":" + partition). Run acquires a
// new epoch on every partition first, so a rerun with the same id continues
// from the committed offset, and fences a copy still running: that copy's next
// commit is refused and its Run returns an error wrapping
// checkpoint.ErrStaleEpoch. Ledger claims name "replay:" + id as the member
// and the group, so a replay's records are Redelivered only to a later run
// of the same id, and Suppressed where a consumer group applied them.
//
// The first run of an id stores its ranges next to the checkpoints (see
// LoadPlan); a later run of the id given other ranges fails with
// ErrPlanChanged before it acquires anything, since resuming checkpoints
// over another range could skip records. Plan a new range under a new id,
// or pass a rerun the stored ranges.
type Replay struct {
	runner
	id     string
	topic  string
	rdb    redis.UniversalClient
	ckpt   *checkpoint.Redis
	ranges []Range

	mu    sync.Mutex
	parts map[int32]*replayPart
	used  atomic.Bool
}

// replayPart is one partition of a run: where it began, whether the reader has
// fed it up to the end, and its worker (nil in a dry run, or when empty).
type replayPart struct {
	rng   Range
	begin int64
	fed   atomic.Bool
	fedTo atomic.Int64 // offset after the last record fed to the worker; 0 for none
	done  atomic.Bool
	w     *worker
}

// NewReplay validates the options and returns a replay of topic over ranges
// (from PlanReplay), with its checkpoint in rdb. Options about groups
// (Group, Topics, GroupProtocol, StartAtLatest, SessionTimeout,
// RevokeTimeout) are GroupOpt only: passing one does not compile. It does
// no I/O; call Run or DryRun once.
func NewReplay(id, topic string, ranges []Range, rdb redis.UniversalClient, opts ...ReplayOpt) (*Replay, error) {
	cfg, err := newConfig(opts, false)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	if id == "" {
		errs = append(errs, errors.New("empty replay id"))
	}
	if topic == "" {
		errs = append(errs, errors.New("no topic"))
	}
	if rdb == nil {
		errs = append(errs, errors.New("no redis client for the checkpoint"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	r := &Replay{runner: newRunner(cfg, replayMember+id), id: id, topic: topic, rdb: rdb,
		ckpt: checkpoint.NewRedis(rdb, checkpoint.Prefix(cfg.replayPrefix+id+":")), ranges: ranges, parts: make(map[int32]*replayPart)}
	r.store = &redisTerms{store: r.ckpt, id: id, onLost: r.fail, held: make(map[checkpoint.Partition]int64)}
	if cfg.deadLetters != nil {
		if r.dlq, err = newDeadLetters(cfg); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
	}
	return r, nil
}

// Checkpoint returns the replay's checkpoint store, for status tools.
func (r *Replay) Checkpoint() *checkpoint.Redis { return r.ckpt }

// Stats returns per-partition counters of the replay, as
// (*Pipeline).Stats does for a group run: a copy, taken under one mutex the
// workers take once per batch.
func (r *Replay) Stats() []PartitionStats { return r.stats.snapshot() }

// Run replays every range, resuming each partition at its checkpoint when a
// run of the same id committed one inside the range. It returns nil once
// every partition reached its end and committed it, the first fatal error
// otherwise (a refused record under Stop, a misconfigured Redis, fencing by a
// newer replay: checkpoint.ErrStaleEpoch). A partition read to its end
// retries its last batch and its final commit through a Redis outage until
// they land, as before its end: reaching the end is no stop. When ctx ends (or a fatal error
// stops the run) each partition finishes its batch in flight, commits and
// stops; a partition still busy after ShutdownTimeout (its sink or
// dead-letter write retrying through an outage) is abandoned without its
// final commit, so nothing past a record that has not landed is ever
// committed. Run then returns ctx's error, and a rerun continues from the
// checkpoint.
func (r *Replay) Run(ctx context.Context) error {
	if !r.used.CompareAndSwap(false, true) {
		return errors.New("replay: Run or DryRun called twice")
	}
	if err := r.setFaults(ctx); err != nil {
		return err
	}
	if err := r.keepPlan(ctx); err != nil {
		return err
	}
	ts := r.store.(*redisTerms)
	member := replayMember + r.id
	var ws []*worker
	for _, rg := range r.ranges {
		part := checkpoint.Partition{Topic: r.topic, Partition: rg.Partition}
		pos, err := r.ckpt.Acquire(ctx, part)
		if err != nil {
			return fmt.Errorf("replay %q: %w", r.id, err)
		}
		ts.assign(part, pos.Epoch)
		rp := r.addPart(rg, pos.Offset)
		r.stats.update(part, func(s *PartitionStats) { s.Epoch, s.Held, s.Start, s.Landed = pos.Epoch, true, rp.begin, rp.begin })
		if rp.fed.Load() {
			rp.done.Store(true)
			continue
		}
		rp.w = newWorker(&r.runner, part, pos.Epoch, member)
		ws = append(ws, rp.w)
	}
	r.cfg.logger.Info("replay starting", "id", r.id, "topic", r.topic, "partitions", len(r.ranges),
		"to_read", len(ws), "commit_every", r.cfg.policy.Every)
	cl, err := r.client()
	if err != nil {
		return err
	}
	r.cl = cl
	for _, w := range ws {
		go w.run()
	}
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-r.stopReq:
			cancel()
		case <-readCtx.Done():
		}
	}()
	r.read(readCtx, func(rp *replayPart, recs []*kgo.Record) error {
		rp.fedTo.Store(recs[len(recs)-1].Offset + 1)
		rp.w.q.push(recs)
		return nil
	}, func(rp *replayPart) { rp.w.stop(finishing) })
	// Every partition is fed (or the run is stopping): wait for the
	// workers to drain, unless the run is stopped meanwhile.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for _, w := range ws {
			<-w.done
		}
	}()
	stopped := false
	select {
	case <-drained:
	case <-readCtx.Done():
		stopped = true
		r.stopWorkers(ws)
	}
	for _, w := range ws {
		<-w.done
		r.mu.Lock()
		rp := r.parts[w.part.Partition]
		r.mu.Unlock()
		rp.done.Store(r.reachedEnd(rp, w))
		r.store.Release(w.part, w.epoch)
		r.stats.update(w.part, func(s *PartitionStats) { s.Held = false })
	}
	cl.Close()
	if r.dlq != nil {
		r.dlq.close()
	}
	t := Totals(r.stats.snapshot())
	r.cfg.logger.Info("replay stopped", "id", r.id, "attempts", t.Attempts, "applied", t.Applied,
		"suppressed", t.Suppressed, "poison", t.DeadLettered+t.DeadLetterReplays, "fenced_commits", t.Fenced)
	if err := r.Err(); err != nil {
		return err
	}
	if stopped && ctx.Err() != nil {
		return fmt.Errorf("replay %q stopped before its end: %w", r.id, ctx.Err())
	}
	for _, p := range r.Progress() {
		if !p.Done {
			return fmt.Errorf("replay %q: %s/%d stopped at offset %d before its end %d", r.id, r.topic, p.Partition, p.Landed, p.To)
		}
	}
	return nil
}

// addPart records a partition's range and where this run begins it: at the
// checkpoint when that lies inside the range, else at the range's start.
func (r *Replay) addPart(rg Range, committed int64) *replayPart {
	rp := &replayPart{rng: rg, begin: min(max(rg.From, committed), max(rg.To, rg.From))}
	if rp.begin >= rg.To {
		rp.fed.Store(true)
	}
	r.mu.Lock()
	r.parts[rg.Partition] = rp
	r.mu.Unlock()
	return rp
}
