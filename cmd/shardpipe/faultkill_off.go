//go:build !shardpipe_faults

package main

import "context"

// withFaultPoints returns ctx: a shipping build has no fault points (see
// faultkill.go, built with the shardpipe_faults tag for the tests).
func withFaultPoints(ctx context.Context) (context.Context, error) { return ctx, nil }
