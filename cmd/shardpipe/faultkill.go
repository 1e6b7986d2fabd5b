//go:build shardpipe_faults

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/shardpipe/shardpipe/internal/faults"
)

// envKillAfterEffect, in a binary built with the shardpipe_faults tag (the
// integration tests' only), is N: the process SIGKILLs itself right after
// the Nth external effect (--effect http or sql) that succeeded, before its
// guard claim is marked done: for --effect sql, between the database
// COMMIT and the done write, the window the inbox closes.
const envKillAfterEffect = "SHARDPIPE_FAULT_KILL_AFTER_EFFECT"

// withFaultPoints returns ctx carrying the fault points the environment
// asks for (envKillAfterEffect), for pipeline.Run to pass to its guard.
func withFaultPoints(ctx context.Context) (context.Context, error) {
	v := os.Getenv(envKillAfterEffect)
	if v == "" {
		return ctx, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return nil, usageErr(fmt.Sprintf("%s %q: want a whole number of effects, at least 1", envKillAfterEffect, v))
	}
	var seen atomic.Int64
	return faults.WithGuard(ctx, faults.Guard{AfterEffect: func(context.Context, string) error {
		if seen.Add(1) == n {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // SIGKILL is not handled: nothing after it runs
		}
		return nil
	}}), nil
}
