package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
)

// RunWorker measures spec.Mode in this process and returns its result
// without the rusage fields, which only the parent can read. Allocations
// count every heap object this process allocated from the call on.
func RunWorker(ctx context.Context, spec Spec, log *slog.Logger) (Result, error) {
	if err := spec.validate(); err != nil {
		return Result{}, err
	}
	var err error
	if spec.kafka, err = spec.Kafka.Opts(); err != nil {
		return Result{}, fmt.Errorf("bench worker %s: kafka: %w", spec.Mode, err)
	}
	if spec.CPUProfile != "" {
		f, err := os.Create(spec.CPUProfile)
		if err != nil {
			return Result{}, fmt.Errorf("bench: cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return Result{}, fmt.Errorf("bench: cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if spec.MemProfile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	objs0, bytes0 := allocs()
	var res Result
	switch spec.Mode {
	case Consume:
		res, err = runConsume(ctx, spec)
	case Sink:
		res, err = runSink(ctx, spec)
	case Scripted, Ledger:
		res, err = runScripted(ctx, spec)
	case Naive:
		res, err = runNaive(ctx, spec)
	case PGCeiling, PGInbox:
		res, err = runPGCeiling(ctx, spec)
	case Shardpipe, Totals, Replay, GuardSeq, GuardInFlight, GuardFast, SQLEffect, SQLBatches:
		res, err = runPipeline(ctx, spec, log)
	case Latency:
		res, err = runLatency(ctx, spec, log)
	default:
		return Result{}, fmt.Errorf("bench: unknown mode %q", spec.Mode)
	}
	if err != nil {
		return Result{}, fmt.Errorf("bench %s: %w", spec.Mode, err)
	}
	objs1, bytes1 := allocs()
	res.Mode, res.Allocs, res.AllocBytes = spec.Mode, objs1-objs0, bytes1-bytes0
	res.MaxRSSMB = selfPeakRSSMB()
	if spec.MemProfile != "" {
		f, err := os.Create(spec.MemProfile)
		if err != nil {
			return Result{}, fmt.Errorf("bench: mem profile: %w", err)
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return Result{}, fmt.Errorf("bench: mem profile: %w", err)
		}
	}
	return res, nil
}

// allocs reads the heap objects and bytes allocated so far.
func allocs() (objects, bytes uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}
