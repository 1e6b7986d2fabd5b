package pipeline

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults"
)

// terms is the checkpoint store as a worker sees it: commits fenced by the
// term's epoch (with the leader epoch of the record before the offset, for
// stores that keep it), and the local record of which terms are held.
// checkpoint.Kafka is one (group runs); redisTerms is the other (replays).
type terms interface {
	CommitAt(ctx context.Context, p checkpoint.Partition, epoch, offset int64, leaderEpoch int32) error
	Held(p checkpoint.Partition) (checkpoint.Position, bool)
	Release(p checkpoint.Partition, epoch int64)
}

// runner is what partition workers need from whatever runs them, a group
// Pipeline or a Replay: the settings, the fetching client (to pause and resume
// a partition), the checkpoint store, the counters, the event observer and the
// way to stop everything on a fatal error.
type runner struct {
	cfg   config
	cl    *kgo.Client
	store terms
	stats stats
	dlq   *deadLetters // nil: poison records stop the run
	// pass names the group the workers' terms belong to in ledger claims
	// (sink.Record.Group): the consumer group, or "replay:" + id.
	pass string
	// faults are the fault points Run's context carried (tests only); nil
	// in production.
	faults atomic.Pointer[faults.Set]

	// slots caps the effects running at once over every worker
	// (MaxInFlightTotal); nil without MaxInFlight.
	slots chan struct{}

	// failing sums the workers' runs of records that failed for good with
	// no success of their partitions since (stormpath.go): what
	// DeadLetterMaxRun bounds.
	failing atomic.Int64

	stopOnce sync.Once
	stopReq  chan struct{}
	errMu    sync.Mutex
	err      error
}

func newRunner(cfg config, pass string) runner {
	var slots chan struct{}
	if cfg.maxInFlight > 0 {
		slots = make(chan struct{}, cfg.maxInFlightTotal)
	}
	return runner{cfg: cfg, pass: pass, stopReq: make(chan struct{}), slots: slots}
}

func (r *runner) requestStop() { r.stopOnce.Do(func() { close(r.stopReq) }) }

// fail records the first fatal error and stops the run.
func (r *runner) fail(err error) {
	r.errMu.Lock()
	if r.err == nil {
		r.err = err
		r.cfg.logger.Error("pipeline stopping on error", "err", err)
	}
	r.errMu.Unlock()
	r.requestStop()
}

// Err returns the error that stopped the run, if any.
func (r *runner) Err() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.err
}

func (r *runner) emit(e Event) {
	if r.cfg.observer == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	r.cfg.observer(e)
}

// dlqConfig is the dead-letter configuration, nil without dead letters.
func (r *runner) dlqConfig() *deadLetterConfig {
	if r.dlq == nil {
		return nil
	}
	return &r.dlq.cfg
}
