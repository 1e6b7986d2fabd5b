// Package watch records pipeline events and lets tests and the demo wait for
// a condition over them instead of sleeping.
package watch

import (
	"context"
	"fmt"
	"sync"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Log collects events from any number of pipelines. Its Observe method is a
// pipeline.Observe callback; it never blocks.
type Log struct {
	mu     sync.Mutex
	events []pipeline.Event
	tag    []string
	signal chan struct{}
}

// New returns an empty Log.
func New() *Log { return &Log{signal: make(chan struct{}, 1)} }

// Observer returns a callback that records events under tag (say, the
// consumer's name).
func (l *Log) Observer(tag string) func(pipeline.Event) {
	return func(e pipeline.Event) {
		l.mu.Lock()
		l.events = append(l.events, e)
		l.tag = append(l.tag, tag)
		l.mu.Unlock()
		select {
		case l.signal <- struct{}{}:
		default:
		}
	}
}

// Tagged is an event and the tag of the pipeline that emitted it.
type Tagged struct {
	pipeline.Event
	Tag string
}

// Events returns a copy of everything recorded so far.
func (l *Log) Events() []Tagged {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Tagged, len(l.events))
	for i, e := range l.events {
		out[i] = Tagged{Event: e, Tag: l.tag[i]}
	}
	return out
}

// Wait blocks until cond holds over the events recorded so far, or ctx ends.
func (l *Log) Wait(ctx context.Context, what string, cond func([]Tagged) bool) error {
	for {
		if cond(l.Events()) {
			return nil
		}
		select {
		case <-l.signal:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

// Committed returns the highest offset committed per partition by tag ("" for
// any tag).
func Committed(evs []Tagged, tag string) map[checkpoint.Partition]int64 {
	m := map[checkpoint.Partition]int64{}
	for _, e := range evs {
		if e.Kind == pipeline.Committed && (tag == "" || e.Tag == tag) && e.Offset > m[e.Partition] {
			m[e.Partition] = e.Offset
		}
	}
	return m
}

// Has reports whether an event of kind was recorded for p by tag ("" any).
func Has(evs []Tagged, tag string, kind pipeline.EventKind, p checkpoint.Partition) bool {
	for _, e := range evs {
		if e.Kind == kind && e.Partition == p && (tag == "" || e.Tag == tag) {
			return true
		}
	}
	return false
}
