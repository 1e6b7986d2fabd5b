package scenario

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/faults/commitfault"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// ZombieConfig sizes Zombie. Zero fields take the defaults: 4 partitions of
// 100 records, a commit every 10, a 2 s revoke timeout for the stalled member.
type ZombieConfig struct {
	Partitions   int32 // partitions of the topic, default 4
	PerPartition int   // records per partition, default 100
	// CommitEvery is the scenario's commit policy in records (default 10;
	// no time-based commits); Setup.Options may override it.
	CommitEvery int
	// RevokeTimeout is how long the stalled member's batch may delay a
	// revoke before it is fenced (pipeline.RevokeTimeout), default 2 s.
	RevokeTimeout time.Duration
}

// ZombieFigures are Zombie's own figures.
type ZombieFigures struct {
	// Moved lists the partitions that moved from the stalled member to the
	// new one.
	Moved []checkpoint.Partition
	// Member is the zombie's group member ID.
	Member string
	// Epoch is the zombie's generation (classic) or member epoch (KIP-848)
	// when it stalled.
	Epoch int32
	// The zombie's figures on the moved partitions after it woke:
	ZombieAttempts int64 // records of its stale batches it attempted
	// ZombieApplied counts the claims its stale batches wrote
	// (pipeline.PartitionStats.Claimed, since a zombie never commits and so
	// never counts Applied); must be 0.
	ZombieApplied    int64
	ZombieSuppressed int64 // its effects the ledger suppressed
	ZombieFenced     int64 // its commits refused (see Refusals)
	// Refusals holds the zombie's refused commits on the moved partitions;
	// each must wrap checkpoint.ErrStaleEpoch.
	Refusals []error
	// BrokerRefusal is what shardpipe's commit path (a checkpoint.Kafka over
	// the zombie's client) returns for a commit of a moved partition that
	// carries the zombie's member ID and old epoch and passes the local
	// fence: the commit the zombie's worker would have sent had it left
	// before the rebalance and reached the broker after it. It is the
	// broker's answer, as franz-go hands it over (nil would mean the broker
	// accepted it).
	BrokerRefusal error
	// StaleEpochRetries lists franz-go's reports that the broker answered
	// such a commit with STALE_MEMBER_EPOCH (KIP-848 groups): franz-go then
	// retries with the member's new epoch, leaving out the partitions the
	// member no longer owns, and answers REBALANCE_IN_PROGRESS for those.
	StaleEpochRetries []StaleEpochRetry
}

func (c ZombieConfig) withDefaults() ZombieConfig {
	if c.Partitions == 0 {
		c.Partitions = 4
	}
	if c.PerPartition == 0 {
		c.PerPartition = 100
	}
	if c.CommitEvery == 0 {
		c.CommitEvery = 10
	}
	if c.RevokeTimeout == 0 {
		c.RevokeTimeout = 2 * time.Second
	}
	return c
}

// Zombie runs a zombie commit after the partition moved: member A stalls in
// the middle of a batch on every partition; member B joins and the
// partitions that move to B are revoked from A past its revoke deadline, so
// A is fenced for them; B processes them to the end. Then A wakes and
// finishes its stale batches: its effects must be suppressed and its commits
// refused, locally and by the broker, so B's committed offsets stay. A few
// seconds on a local broker.
func Zombie(ctx context.Context, s Setup, cfg ZombieConfig) (*Report, error) {
	env, ctx, stop, err := start(ctx, s, "zombie")
	if err != nil {
		return nil, err
	}
	defer stop()
	cfg = cfg.withDefaults()
	var res ZombieFigures
	keys, err := env.orders(ctx, cfg.Partitions, cfg.PerPartition)
	if err != nil {
		return nil, err
	}
	end := int64(cfg.PerPartition)

	release := make(chan struct{})
	stall := newStaller(release, int(cfg.Partitions))
	defaults := []pipeline.GroupOpt{pipeline.CommitEvery(cfg.CommitEvery), pipeline.CommitInterval(0)}
	staleLog := &staleEpochLog{}
	a, err := env.consumer("A", env.ledger, defaults,
		pipeline.RevokeTimeout(cfg.RevokeTimeout), pipeline.KafkaOptions(kgo.WithLogger(staleLog)))
	if err != nil {
		return nil, err
	}
	doneA := runAsync(faults.WithWorker(ctx, faults.Worker{BeforeApply: stall.hook}), a)
	closed := false
	defer func() {
		if !closed { // an early return: stop both consumers at once
			a.Abort()
			<-doneA
		}
	}()
	for range cfg.Partitions {
		select {
		case <-stall.stalled:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for A to stall on every partition: %w", ctx.Err())
		}
	}
	res.Member, res.Epoch = a.Client().GroupMetadata()

	b, err := env.consumer("B", env.ledger, defaults)
	if err != nil {
		return nil, err
	}
	doneB := runAsync(ctx, b)
	defer func() {
		if !closed {
			b.Abort()
			<-doneB
		}
	}()
	err = env.Log.Wait(ctx, "B to own partitions and commit them to the end", func(evs []watch.Tagged) bool {
		res.Moved = res.Moved[:0]
		for _, e := range evs {
			if e.Tag == "B" && e.Kind == pipeline.Assigned {
				res.Moved = append(res.Moved, e.Partition)
			}
		}
		c := watch.Committed(evs, "B")
		for _, p := range res.Moved {
			if c[p] != end {
				return false
			}
		}
		return len(res.Moved) > 0
	})
	if err != nil {
		return nil, err
	}

	close(release) // A wakes up holding its stale batches
	err = env.Log.Wait(ctx, "A's late commits on the moved partitions to be refused", func(evs []watch.Tagged) bool {
		for _, p := range res.Moved {
			if !watch.Has(evs, "A", pipeline.CommitRefused, p) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	res.BrokerRefusal = staleCommit(ctx, a, res.Member, res.Epoch, res.Moved[0])
	res.StaleEpochRetries = staleLog.retries()
	closed = true
	errA, errB := closeAndWait(a, doneA), closeAndWait(b, doneB)
	if errA != nil {
		return nil, errA
	}
	if errB != nil {
		return nil, errB
	}
	r, err := env.finish(ctx, "zombie", keys, append(a.Stats(), b.Stats()...))
	if err != nil {
		return nil, err
	}
	for _, e := range env.Log.Events() {
		if e.Tag == "A" && e.Kind == pipeline.CommitRefused {
			res.Refusals = append(res.Refusals, e.Err)
		}
	}
	moved := map[checkpoint.Partition]bool{}
	for _, p := range res.Moved {
		moved[p] = true
	}
	for _, s := range a.Stats() {
		if moved[s.Partition] {
			res.ZombieAttempts += s.Attempts
			res.ZombieApplied += s.Claimed
			res.ZombieSuppressed += s.Suppressed
			res.ZombieFenced += s.Fenced
		}
	}
	r.Zombie = &res
	return r, nil
}

// staller blocks the first batch of each partition until release closes.
type staller struct {
	release <-chan struct{}
	stalled chan struct{}
	mu      sync.Mutex
	seen    map[checkpoint.Partition]bool
}

func newStaller(release <-chan struct{}, parts int) *staller {
	return &staller{release: release, stalled: make(chan struct{}, parts), seen: map[checkpoint.Partition]bool{}}
}

func (s *staller) hook(ctx context.Context, p checkpoint.Partition, _ int64, _ []sink.Record) {
	s.mu.Lock()
	first := !s.seen[p]
	s.seen[p] = true
	s.mu.Unlock()
	if !first {
		return
	}
	s.stalled <- struct{}{}
	select {
	case <-s.release:
	case <-ctx.Done():
	}
}

// staleCommit commits p through shardpipe's own commit path, a
// checkpoint.Kafka over A's client, with A's member ID and the epoch it had
// when it stalled: the commit A's worker would have sent had the commit left
// A before the rebalance and reached the broker after it. The store's term is
// opened at that epoch, so the local fence lets it through and the answer is
// the broker's (as franz-go hands it over). Offset 5 would move B's offset
// back, so an accepted commit shows in the committed offsets too.
func staleCommit(ctx context.Context, a *pipeline.Pipeline, member string, epoch int32, p checkpoint.Partition) error {
	store := checkpoint.NewKafka(a.Client())
	store.Assign(p, int64(epoch))
	ctx = commitfault.With(ctx, func(req *kmsg.OffsetCommitRequest) error {
		req.MemberID, req.Generation = member, epoch
		return nil
	})
	return store.Commit(ctx, p, int64(epoch), 5)
}

// StaleEpochRetry is one franz-go report of an OffsetCommit the broker
// answered with STALE_MEMBER_EPOCH.
type StaleEpochRetry struct {
	OldEpoch int32 // the member epoch the commit carried
	NewEpoch int32 // the member epoch franz-go retried it with
	Dropped  int   // partitions left out of the retry: no longer owned
}

// staleEpochLog is a franz-go logger that keeps its "offset commit got stale
// member epoch" reports: the only place franz-go says the broker answered
// STALE_MEMBER_EPOCH, since it retries such a commit with the new epoch and
// answers REBALANCE_IN_PROGRESS itself for the partitions it dropped.
type staleEpochLog struct {
	mu   sync.Mutex
	seen []StaleEpochRetry
}

func (l *staleEpochLog) Level() kgo.LogLevel { return kgo.LogLevelInfo }

func (l *staleEpochLog) Log(_ kgo.LogLevel, msg string, kv ...any) {
	if !strings.HasPrefix(msg, "offset commit got stale member epoch") {
		return
	}
	var r StaleEpochRetry
	for i := 0; i+1 < len(kv); i += 2 {
		switch kv[i] {
		case "old_epoch":
			r.OldEpoch, _ = kv[i+1].(int32)
		case "new_epoch":
			r.NewEpoch, _ = kv[i+1].(int32)
		case "lost_partitions_filtered":
			r.Dropped, _ = kv[i+1].(int)
		}
	}
	l.mu.Lock()
	l.seen = append(l.seen, r)
	l.mu.Unlock()
}

func (l *staleEpochLog) retries() []StaleEpochRetry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]StaleEpochRetry(nil), l.seen...)
}

// committed reads the group's committed offsets of parts from the broker.
func committed(ctx context.Context, env runEnv, parts []checkpoint.Partition) (map[checkpoint.Partition]int64, error) {
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, env.kopts...), kgo.SeedBrokers(env.Brokers...))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, env.Group)
	if err != nil {
		return nil, fmt.Errorf("fetch committed offsets of %s: %w", env.Group, err)
	}
	out := map[checkpoint.Partition]int64{}
	for _, p := range parts {
		if o, ok := offs.Lookup(p.Topic, p.Partition); ok {
			out[p] = o.At
		}
	}
	return out, nil
}
