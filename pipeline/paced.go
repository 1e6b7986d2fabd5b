package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// Paced limits a to perSecond records per second over all partitions: each
// batch waits for its turn, spaced by its size, or until its context ends
// (the context's error, nothing applied). It costs one mutex per batch;
// batches should be small against the rate (a tenth of a second's worth,
// MaxBatch) for the pace to be smooth. perSecond must be positive. It is a
// Finisher when a is one: Finish goes to a at once, unpaced.
func Paced(a Applier, perSecond float64) Applier {
	return &paced{a: a, per: time.Duration(float64(time.Second) / perSecond)}
}

// paced is Paced's Applier.
type paced struct {
	a   Applier
	per time.Duration // time one record is worth

	mu   sync.Mutex
	next time.Time // when the next batch may start
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

// Key forwards to the paced Applier when it is a Keyer; else the record key.
func (p *paced) Key(r *sink.Record) (string, error) {
	if k, ok := p.a.(Keyer); ok {
		return k.Key(r)
	}
	return string(r.Key), nil
}

func (p *paced) Finish(ctx context.Context, batch []sink.Record) (int, int, error) {
	return finish(ctx, p.a, batch)
}
