package sink

import (
	"context"

	"github.com/shardpipe/shardpipe/internal/faults/guardfault"
)

// Fault points of Guard.Do, for tests and the integration kit's scenarios
// (package internal/faults): they come with Do's context. Production
// contexts carry none; each point then costs one context lookup.
const (
	afterClaim  = iota // the pending claim is written, the effect not run
	afterEffect        // the effect ran, the claim is not marked done
)

// faultPoint runs the point ctx carries at where, if any: an error it
// returns makes Do return at once, leaving Redis as a crash there would.
func faultPoint(ctx context.Context, key string, where int) error {
	p := guardfault.From(ctx)
	if p == nil {
		return nil
	}
	if where == afterClaim {
		return guardfault.Run(p.AfterClaim, ctx, key)
	}
	return guardfault.Run(p.AfterEffect, ctx, key)
}
