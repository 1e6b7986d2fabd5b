package scenario

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// landedGate makes a consumer die between effect and commit at a chosen
// moment: the first batch holding an order numbered from or later is
// applied (its effects land), then the gate closes landed and holds the
// worker inside Apply until the consumer is aborted, so that batch is never
// committed by it.
type landedGate struct {
	from   int
	once   sync.Once
	landed chan struct{}
}

func newLandedGate(from int) *landedGate { return &landedGate{from: from, landed: make(chan struct{})} }

func (g *landedGate) wrap(a pipeline.Applier) pipeline.Applier { return gated{a, g} }

type gated struct {
	pipeline.Applier
	g *landedGate
}

func (a gated) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	res, err := a.Applier.Apply(ctx, batch)
	if err != nil || !a.g.reached(batch) {
		return res, err
	}
	a.g.once.Do(func() { close(a.g.landed) })
	<-ctx.Done() // hold the landed batch until the consumer dies
	return nil, ctx.Err()
}

// Finish forwards to the wrapped Applier when it is a pipeline.Finisher.
func (a gated) Finish(ctx context.Context, batch []sink.Record) (int, int, error) {
	return finish(ctx, a.Applier, batch)
}

// reached reports whether batch holds an order numbered g.from or later
// (keys as Rebalance writes them: order-NNNNNN).
func (g *landedGate) reached(batch []sink.Record) bool {
	for _, r := range batch {
		n, err := strconv.Atoi(strings.TrimPrefix(string(r.Key), "order-"))
		if err == nil && n >= g.from {
			return true
		}
	}
	return false
}

// pauseGate holds the effects of the consumers it wraps while it is closed:
// a batch waits before its effects, so nothing it holds lands, and nothing
// of it is committed, until the gate opens.
type pauseGate struct {
	mu sync.Mutex
	ch chan struct{} // nil: open
}

func (g *pauseGate) close() {
	g.mu.Lock()
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
	g.mu.Unlock()
}

func (g *pauseGate) open() {
	g.mu.Lock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
	g.mu.Unlock()
}

func (g *pauseGate) wrap(a pipeline.Applier) pipeline.Applier { return paused{a, g} }

type paused struct {
	pipeline.Applier
	g *pauseGate
}

func (a paused) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	a.g.mu.Lock()
	ch := a.g.ch
	a.g.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return a.Applier.Apply(ctx, batch)
}

// Finish forwards to the wrapped Applier when it is a pipeline.Finisher.
func (a paused) Finish(ctx context.Context, batch []sink.Record) (int, int, error) {
	return finish(ctx, a.Applier, batch)
}

// finish calls a's Finish, if it has one: a wrapper that hid it would lose
// the finishing of a guarded batch whose outcome is unknown at a term's end.
func finish(ctx context.Context, a pipeline.Applier, batch []sink.Record) (int, int, error) {
	if f, ok := a.(pipeline.Finisher); ok {
		return f.Finish(ctx, batch)
	}
	return 0, 0, nil
}
