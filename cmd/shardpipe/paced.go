package main

import (
	"context"
	"sync"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// paced limits an Applier to a rate in records per second over all
// partitions: each batch waits for its turn, spaced by its size. It costs one
// mutex per batch; batches should be small against the rate (replay caps
// them at a tenth of a second's worth) for the pace to be smooth.
type paced struct {
	a   pipeline.Applier
	per time.Duration // time one record is worth

	mu   sync.Mutex
	next time.Time // when the next batch may start
}

func newPaced(a pipeline.Applier, perSecond float64) *paced {
	return &paced{a: a, per: time.Duration(float64(time.Second) / perSecond)}
}

func (p *paced) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	at := p.next
	p.next = p.next.Add(time.Duration(len(batch)) * p.per)
	p.mu.Unlock()
	if wait := time.Until(at); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return p.a.Apply(ctx, batch)
}
