package opshttp

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// healthCache holds readiness's last Redis result, so that a flood of
// probes costs Redis one write per interval. Safe for concurrent use.
type healthCache struct {
	mu      sync.Mutex
	last    Check
	started time.Time     // when the write behind last started; zero: none yet
	running chan struct{} // closed when the write in flight ends; nil: none
}

// get returns the last result when its write started less than
// p.redisEvery ago; otherwise it waits for the write in flight, starting
// one when there is none. The write runs on its own (bounded by
// p.redisTimeout), so a probe whose ctx ends stops waiting without
// cutting it short for the others.
func (h *healthCache) get(ctx context.Context, p *Probe) Check {
	if err := ctx.Err(); err != nil {
		return Check{Name: "redis", Detail: fmt.Sprintf("SET %s not tried: %v", p.redisKey, err)}
	}
	h.mu.Lock()
	if !h.started.IsZero() && h.running == nil && p.now().Sub(h.started) < p.redisEvery {
		c := h.last
		h.mu.Unlock()
		return c
	}
	wait := h.running
	if wait == nil {
		done := make(chan struct{})
		h.running, wait = done, done
		start := p.now()
		go func() {
			c := p.setHealth(context.WithoutCancel(ctx))
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
		return Check{Name: "redis", Detail: fmt.Sprintf("SET %s: gave up waiting: %v", p.redisKey, ctx.Err())}
	}
}
