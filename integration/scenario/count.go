package scenario

import (
	"context"
	"sync"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// counter counts applications per business key; safe for concurrent use.
// Effect calls are counted with add. Sink results are counted by the sink's
// counting rule (see sink.Outcome), per record (topic, partition, offset):
// each Applied result counts, and a record that no call reported Applied but
// one reported Redelivered (its claim names it under another term: the
// term that wrote it never saw the reply, its batch failed as unknown)
// counts once. So a key is counted once per record it was applied from,
// and twice only if two terms each wrote a claim for it: the ledger lost the
// first, or there is none.
type counter struct {
	mu          sync.Mutex
	n           map[string]int        // add: calls per key
	applied     map[recordID]int      // Applied results per record
	redelivered map[recordID]struct{} // records some call reported Redelivered
	keyOf       map[recordID]string
}

// recordID names a record: its topic, partition and offset.
type recordID struct {
	topic     string
	partition int32
	offset    int64
}

func newCounter() *counter {
	return &counter{n: map[string]int{}, applied: map[recordID]int{}, redelivered: map[recordID]struct{}{},
		keyOf: map[recordID]string{}}
}

func (c *counter) add(key string) {
	c.mu.Lock()
	c.n[key]++
	c.mu.Unlock()
}

func (c *counter) results(batch []sink.Record, res []sink.Result, err error) {
	if err != nil {
		return // outcome unknown: the record's next attempt reports it
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, r := range res {
		id := recordID{batch[i].Topic, batch[i].Partition, batch[i].Offset}
		switch {
		case r.Err != nil:
			continue
		case r.Outcome == sink.Applied:
			c.applied[id]++
		case r.Outcome == sink.Redelivered:
			c.redelivered[id] = struct{}{}
		default:
			continue
		}
		c.keyOf[id] = r.Key
	}
}

func (c *counter) snapshot() map[string]int {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n)+len(c.keyOf))
	for k, v := range c.n {
		out[k] = v
	}
	for id, key := range c.keyOf {
		if n := c.applied[id]; n > 0 {
			out[key] += n
		} else {
			out[key]++ // redelivered only: applied by a term that never saw the reply
		}
	}
	return out
}

// countingApplier counts the records its Applier reports as applied.
type countingApplier struct {
	pipeline.Applier
	c *counter
}

func (a countingApplier) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	res, err := a.Applier.Apply(ctx, batch)
	a.c.results(batch, res, err)
	return res, err
}

// Finish forwards to the wrapped Applier when it is a pipeline.Finisher
// (guard mode), so the scenarios' consumers finish as run's do.
func (a countingApplier) Finish(ctx context.Context, batch []sink.Record) (int, int, error) {
	return finish(ctx, a.Applier, batch)
}

// countingEffect counts the effect's successful calls per business key.
func countingEffect(e pipeline.ExternalEffect, c *counter) pipeline.ExternalEffect {
	return func(ctx context.Context, key string, r *sink.Record) error {
		err := e(ctx, key, r)
		if err == nil {
			c.add(key)
		}
		return err
	}
}
