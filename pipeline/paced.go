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
// MaxBatch) for the pace to be smooth. perSecond must be positive. It is
// built with Wrap, so it is a Keyer and a Finisher exactly when a is one:
// Key and Finish go to a at once, unpaced, and over an Applier that is no
// Keyer MaxInFlight runs keyless records each on its own, as it would
// over a.
func Paced(a Applier, perSecond float64) Applier {
	p := &pacer{per: time.Duration(float64(time.Second) / perSecond)}
	return Wrap(a, p.pace)
}

// pacer is Paced's Middleware.
type pacer struct {
	per time.Duration // time one record is worth

	mu   sync.Mutex
	next time.Time // when the next batch may start
}

func (p *pacer) pace(ctx context.Context, batch []sink.Record, next ApplyFunc) ([]sink.Result, error) {
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
	return next(ctx, batch)
}
