package opshttp

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// healthCache holds the last result of one readiness check that calls a
// server (Redis's write, a Dependency's ping), so that a flood of probes
// costs the server one call per interval. Safe for concurrent use.
type healthCache struct {
	name    string                          // the check's name in a Report
	what    string                          // the call, for messages: "SET key", "ping"
	run     func(ctx context.Context) Check // the call, bounded by its own timeout
	mu      sync.Mutex
	last    Check
	started time.Time     // when the call behind last started; zero: none yet
	running chan struct{} // closed when the call in flight ends; nil: none
}

// get returns the last result when its call started less than every ago;
// otherwise it waits for the call in flight, starting one when there is
// none. The call runs on its own (bounded by its own timeout), so a probe
// whose ctx ends stops waiting without cutting it short for the others.
func (h *healthCache) get(ctx context.Context, every time.Duration, now func() time.Time) Check {
	if err := ctx.Err(); err != nil {
		return Check{Name: h.name, Detail: fmt.Sprintf("%s not tried: %v", h.what, err)}
	}
	h.mu.Lock()
	if !h.started.IsZero() && h.running == nil && now().Sub(h.started) < every {
		c := h.last
		h.mu.Unlock()
		return c
	}
	wait := h.running
	if wait == nil {
		done := make(chan struct{})
		h.running, wait = done, done
		start := now()
		go func() {
			c := h.run(context.WithoutCancel(ctx))
			h.mu.Lock()
			h.last, h.started, h.running = c, start, nil
			h.mu.Unlock()
			close(done)
		}()
	}
	h.mu.Unlock()
	select {
	case <-wait:
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.last
	case <-ctx.Done():
		return Check{Name: h.name, Detail: fmt.Sprintf("%s: gave up waiting: %v", h.what, ctx.Err())}
	}
}
