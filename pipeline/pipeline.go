package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// Fetch settings (see New): how long the broker holds a fetch with no new
// data, and how much of one partition a fetch returns at most.
const (
	fetchMaxWait           = 100 * time.Millisecond
	fetchMaxPartitionBytes = 256 << 10
)

// Pipeline consumes its topics in a consumer group and lands effects through
// its sink. Create it with New, start it with Run, stop it by ending Run's
// context or with Close.
type Pipeline struct {
	runner
	kafka *checkpoint.Kafka // the runner's store, with the group terms

	mu      sync.Mutex
	workers map[checkpoint.Partition]*worker

	ready   chan struct{} // closed once New has set cl and store: franz-go may call back before
	started atomic.Bool   // Run began, or Close/Abort ended a pipeline that never ran
	runDone chan struct{}
	aborted bool
}

// New validates the options and creates the franz-go client, which starts
// joining the group at once: call Run promptly, or Close.
func New(opts ...GroupOpt) (*Pipeline, error) {
	cfg, err := newConfig(opts, true)
	if err != nil {
		return nil, err
	}
	p := &Pipeline{runner: newRunner(cfg, cfg.group), workers: make(map[checkpoint.Partition]*worker),
		ready: make(chan struct{}), runDone: make(chan struct{})}
	start := kgo.NewOffset().AtStart()
	if !cfg.startEarliest {
		start = kgo.NewOffset().AtEnd()
	}
	// The queues pause and resume partitions all the time under load. A
	// paused partition is fetched again only after the broker answers the
	// fetch in flight, which waits up to FetchMaxWait when the partitions
	// it asks for have nothing new (franz-go's default 5s): keep it short.
	// Pausing drops what franz-go buffered for the partition, to be fetched
	// again, and queued records keep their whole fetch response alive: keep
	// a partition's share of a fetch small (franz-go's default is 1MiB).
	// KafkaOptions may override both.
	kopts := append([]kgo.Opt{kgo.WithLogger(kgoLogger{cfg.logger}), kgo.FetchMaxWait(fetchMaxWait),
		kgo.FetchMaxPartitionBytes(fetchMaxPartitionBytes)}, append(cfg.traceHooks(), cfg.kgoOpts...)...)
	kopts = append(kopts,
		kgo.SeedBrokers(cfg.brokers...),
		kgo.ConsumerGroup(cfg.group),
		kgo.ConsumeTopics(cfg.topics...),
		kgo.ConsumeResetOffset(start),
		// Effects of aborted transactions must never land. The markers
		// that end transactions are kept, so commits can move past them
		// (and past an aborted tail) to the last stable offset.
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(p.onAssigned),
		kgo.OnPartitionsRevoked(p.onRevoked),
		kgo.OnPartitionsLost(p.onLost),
	)
	if cfg.protocol == Consumer {
		kopts = append(kopts, kgo.ServerSideBalancer())
	} else {
		kopts = append(kopts, kgo.Balancers(kgo.CooperativeStickyBalancer()))
		if cfg.sessionTimeout > 0 {
			kopts = append(kopts, kgo.SessionTimeout(cfg.sessionTimeout))
		}
	}
	if cfg.instanceID != "" {
		kopts = append(kopts, kgo.InstanceID(cfg.instanceID))
	}
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("pipeline: kafka client: %w", err)
	}
	if cfg.deadLetters != nil {
		if p.dlq, err = newDeadLetters(cfg); err != nil {
			cl.Close()
			return nil, err
		}
	}
	p.cl = cl
	p.kafka = checkpoint.NewKafka(cl)
	p.store = p.kafka
	close(p.ready)
	return p, nil
}

// Run consumes until ctx ends, Close is called, a record stops it (a
// *RecordError: a poison record with no DeadLetters configured, a
// dead-letter write that cannot land, a record Redis refuses as
// misconfigured), or the broker refuses the client's principal (an
// authorization error joining the group, fetching or committing). It then
// drains every partition's queue within the shutdown timeout, commits, and
// leaves the group. It returns nil after a requested stop and the first
// fatal error otherwise. Call it once. A worker still marking done a
// guarded batch whose outcome was unknown when the timeout ran out goes on
// in the background until the claims' leases lapse (see Finisher).
func (p *Pipeline) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("pipeline: Run called twice, or after Close or Abort")
	}
	defer close(p.runDone)
	if err := p.setFaults(ctx); err != nil {
		p.fail(err)
		p.shutdown()
		return err
	}
	pollCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.stopReq:
			cancel()
		case <-pollCtx.Done():
		}
	}()
	p.cfg.logger.Info("pipeline starting", "topics", p.cfg.topics, "group", p.cfg.group,
		"protocol", p.cfg.protocol.String(), "commit_every", p.cfg.policy.Every, "commit_interval", p.cfg.policy.Interval)
	for pollCtx.Err() == nil {
		// Everything franz-go holds: a pause (a queue at its bound)
		// strips what stays buffered for the partition, to be fetched
		// again after the resume (BENCHMARKS.md, "Fetched twice").
		fs := p.cl.PollFetches(pollCtx)
		if fs.IsClientClosed() {
			break
		}
		fs.EachError(func(topic string, partition int32, err error) {
			if ferr := fatalFetch(topic, partition, err); ferr != nil {
				p.fail(ferr)
				return
			}
			if !errors.Is(err, context.Canceled) {
				p.cfg.logger.Warn("fetch error", "topic", topic, "partition", partition, "err", err)
			}
		})
		fs.EachPartition(p.dispatch)
		p.cl.AllowRebalance()
	}
	p.shutdown()
	return p.Err()
}

// dispatch hands one fetched partition's records to its worker. It never
// blocks: BlockRebalanceOnPoll holds rebalances until AllowRebalance.
func (p *Pipeline) dispatch(ft kgo.FetchTopicPartition) {
	if len(ft.Records) == 0 {
		return
	}
	part := checkpoint.Partition{Topic: ft.Topic, Partition: ft.Partition}
	p.mu.Lock()
	w := p.workers[part]
	p.mu.Unlock()
	if w == nil || w.fenced.Load() {
		// A crashed worker's partition: pause it, nothing may land there.
		p.cl.PauseFetchPartitions(map[string][]int32{part.Topic: {part.Partition}})
		return
	}
	w.q.push(ft.Records)
	if lso := ft.LastStableOffset; lso >= 0 {
		p.stats.update(part, func(s *PartitionStats) { s.StableOffset = lso })
	}
}

// shutdown drains the workers within the shutdown timeout and leaves the group.
func (p *Pipeline) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.shutdown)
	defer cancel()
	deadline, _ := ctx.Deadline()
	p.mu.Lock()
	ws := make([]*worker, 0, len(p.workers))
	for _, w := range p.workers {
		ws = append(ws, w)
	}
	aborted := p.aborted
	p.mu.Unlock()
	for _, w := range ws {
		if aborted {
			w.abort()
		} else {
			w.grant(deadline)
			w.stop(draining)
		}
	}
	for _, w := range ws {
		select {
		case <-w.done:
		case <-ctx.Done():
			if w.finishing.Load() {
				p.cfg.logger.Warn("shutdown timeout: leaving a partition whose final commit was made while its worker still marks done effects that ran (it goes on until their leases would lapse, or the process exits)",
					"partition", w.part.String(), "epoch", w.epoch)
			} else {
				p.cfg.logger.Warn("shutdown timeout: abandoning a partition without its final commit",
					"partition", w.part.String(), "epoch", w.epoch, "queued", w.q.len())
			}
			w.kill()
		}
	}
	p.cl.Close() // leaves the group; onRevoked releases what is left
	if p.dlq != nil {
		p.dlq.close()
	}
	t := Totals(p.stats.snapshot())
	p.cfg.logger.Info("pipeline stopped", "aborted", aborted, "attempts", t.Attempts, "applied", t.Applied,
		"suppressed", t.Suppressed, "dead_lettered", t.DeadLettered, "fenced_commits", t.Fenced)
}

// Close stops Run: it drains, commits and leaves the group, waiting until Run
// returns or ctx ends.
func (p *Pipeline) Close(ctx context.Context) error {
	p.requestStop()
	if p.closeUnstarted() {
		return nil
	}
	select {
	case <-p.runDone:
		return p.Err()
	case <-ctx.Done():
		return fmt.Errorf("pipeline close: %w", ctx.Err())
	}
}

// Abort stops Run as a crash would: no drain, no commit, at once. Effects
// that landed after the last commit will be replayed by the next owner and
// suppressed by the ledger, so nothing is lost or applied twice; the cost is
// that replay (up to MaxUncommitted records per partition). Use it when the
// process must stop now (a fault drill, a fatal error elsewhere); Close is
// the orderly stop.
func (p *Pipeline) Abort() {
	p.mu.Lock()
	p.aborted = true
	for _, w := range p.workers { // fence first: not one more commit
		p.store.Release(w.part, w.epoch)
		w.abort()
	}
	p.mu.Unlock()
	p.requestStop()
	if !p.closeUnstarted() {
		<-p.runDone
	}
}

// closeUnstarted closes the client of a pipeline whose Run never began, and
// keeps Run from beginning. It reports whether it did.
func (p *Pipeline) closeUnstarted() bool {
	if !p.started.CompareAndSwap(false, true) {
		return false
	}
	p.cl.Close()
	if p.dlq != nil {
		p.dlq.close()
	}
	close(p.runDone)
	return true
}

// Stats returns per-partition counters, sorted by topic and partition: a
// copy, taken under one mutex the workers take once per batch. Totals sums
// them.
func (p *Pipeline) Stats() []PartitionStats { return p.stats.snapshot() }

// GroupMetadata returns the member ID this pipeline has in its group ("" until
// it has joined) and the generation (classic) or member epoch (consumer)
// of its latest assignment, as franz-go's client reports them.
func (p *Pipeline) GroupMetadata() (member string, generation int32) { return p.cl.GroupMetadata() }

// Client returns the underlying franz-go client, for lag and admin queries.
// Do not poll or commit with it.
func (p *Pipeline) Client() *kgo.Client { return p.cl }
