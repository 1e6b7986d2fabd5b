// Package faults injects faults into pipelines, replays and guards, for
// tests and the integration kit's scenarios. The fault points travel in the
// context given to pipeline.Pipeline.Run, pipeline.Replay.Run and
// sink.Guard.Do, which read them through this package (and
// faults/guardfault); a pipeline passes a guard's points on to its sink.
// Production code attaches none, and the public API of pipeline and sink
// has no name for them.
package faults

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults/guardfault"
	"github.com/shardpipe/shardpipe/sink"
)

// ErrInjectedCrash is the error of a worker killed by Worker.CrashAfter,
// between its effects and its commit.
var ErrInjectedCrash = errors.New("pipeline: injected crash")

// Worker are the fault points of a pipeline's or a replay's partition
// workers.
type Worker struct {
	// BeforeApply runs before each batch's effects with the worker's epoch.
	// It may block (a stalled consumer); it gets the worker's context,
	// which ends when the partition is lost or the run aborts.
	BeforeApply func(ctx context.Context, p checkpoint.Partition, epoch int64, batch []sink.Record)
	// CrashAfter makes the worker of a partition die after k attempted
	// records (k >= 1), after their effects and before any commit of them,
	// as a process death would. The partition is then fenced in this
	// pipeline and left uncommitted for the next owner.
	CrashAfter map[checkpoint.Partition]int
	// Crashed, when set, is called once per crash CrashAfter caused, on the
	// worker's goroutine; it must not block.
	Crashed func(Crash)
}

// Crash describes a worker killed by Worker.CrashAfter.
type Crash struct {
	Partition checkpoint.Partition
	Epoch     int64 // the worker's epoch
	Offset    int64 // the last record it attempted
	Attempts  int   // records it attempted in all
	Err       error // wraps ErrInjectedCrash
}

// Guard are the fault points of sink.Guard.Do.
type Guard = guardfault.Points

// Set is every fault point a context carries.
type Set struct {
	Worker Worker
	Guard  Guard
}

type key struct{}

// WithWorker returns ctx carrying w, and the guard points ctx carried.
func WithWorker(ctx context.Context, w Worker) context.Context {
	return context.WithValue(ctx, key{}, &w)
}

// WithGuard returns ctx carrying g, and the worker points ctx carried.
func WithGuard(ctx context.Context, g Guard) context.Context { return guardfault.With(ctx, g) }

// With returns ctx carrying s.
func With(ctx context.Context, s Set) context.Context {
	return WithGuard(WithWorker(ctx, s.Worker), s.Guard)
}

// From returns the points ctx carries; nil when it carries none (the
// production case).
func From(ctx context.Context) *Set {
	w, _ := ctx.Value(key{}).(*Worker)
	g := guardfault.From(ctx)
	if w == nil && g == nil {
		return nil
	}
	s := &Set{}
	if w != nil {
		s.Worker = *w
	}
	if g != nil {
		s.Guard = *g
	}
	return s
}

// CrashAfter returns Worker points that kill the worker of topic/partition
// after k attempted records, reporting the crash to crashed (may be nil).
func CrashAfter(topic string, partition int32, k int, crashed func(Crash)) Worker {
	return Worker{CrashAfter: map[checkpoint.Partition]int{{Topic: topic, Partition: partition}: k}, Crashed: crashed}
}

// Validate reports points no worker can honour: a CrashAfter below 1.
func (w Worker) Validate() error {
	var errs []error
	for p, k := range w.CrashAfter {
		if k < 1 {
			errs = append(errs, fmt.Errorf("crash after %d attempts on %s: want at least 1", k, p))
		}
	}
	return errors.Join(errs...)
}
