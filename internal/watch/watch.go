// Package watch records pipeline events and lets tests and the demo wait for
// a condition over them instead of sleeping.
package watch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Log collects events from any number of pipelines. Its Observe method is a
// pipeline.Observe callback; it never blocks.
type Log struct {
	mu      sync.Mutex
	events  []pipeline.Event
	tag     []string
	crashed []bool
	signal  chan struct{}
}

// New returns an empty Log.
func New() *Log { return &Log{signal: make(chan struct{}, 1)} }

// Observer returns a callback that records events under tag (say, the
// consumer's name).
func (l *Log) Observer(tag string) func(pipeline.Event) {
	return func(e pipeline.Event) { l.add(e, tag, false) }
}

// Crashes returns a faults.Worker.Crashed callback that records each
// injected crash under tag, as a Tagged with Crashed set (no pipeline
// event kind: Kind is zero).
func (l *Log) Crashes(tag string) func(faults.Crash) {
	return func(c faults.Crash) {
		l.add(pipeline.Event{Partition: c.Partition, Epoch: c.Epoch, Offset: c.Offset, Err: c.Err, Time: time.Now()}, tag, true)
	}
}

func (l *Log) add(e pipeline.Event, tag string, crashed bool) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.tag = append(l.tag, tag)
	l.crashed = append(l.crashed, crashed)
	l.mu.Unlock()
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

// Tagged is an event and the tag of the pipeline that emitted it. Crashed
// marks an injected crash recorded by Crashes.
type Tagged struct {
	pipeline.Event
	Tag     string
	Crashed bool
}

// Events returns a copy of everything recorded so far.
func (l *Log) Events() []Tagged {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Tagged, len(l.events))
	for i, e := range l.events {
		out[i] = Tagged{Event: e, Tag: l.tag[i], Crashed: l.crashed[i]}
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
		if e.Kind == kind && !e.Crashed && e.Partition == p && (tag == "" || e.Tag == tag) {
			return true
		}
	}
	return false
}

// HasCrash reports whether an injected crash was recorded for p by tag (""
// any).
func HasCrash(evs []Tagged, tag string, p checkpoint.Partition) bool {
	for _, e := range evs {
		if e.Crashed && e.Partition == p && (tag == "" || e.Tag == tag) {
			return true
		}
	}
	return false
}
