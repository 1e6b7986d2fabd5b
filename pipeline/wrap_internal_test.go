package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// ownWrapper is a user's wrapper with its own Apply that embeds only
// Applier, so its method set has neither Key nor Finish; unwrap says
// whether it also has the Unwrap convention.
type ownWrapper struct {
	Applier
	calls int
}

func (o *ownWrapper) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	o.calls++
	return o.Applier.Apply(ctx, b)
}

// unwrapping is ownWrapper with Unwrap.
type unwrapping struct{ ownWrapper }

func (u *unwrapping) Unwrap() Applier { return u.Applier }

// logged is a user's middleware built with Wrap.
func logged(a Applier) Applier {
	return Wrap(a, func(ctx context.Context, b []sink.Record, next ApplyFunc) ([]sink.Result, error) {
		return next(ctx, b)
	})
}

// TestWrapKeepsCapabilities: what the worker finds on its Sink through
// wrappers. A keyless record whose business key is in its header is
// ordered by that key under MaxInFlight (keyOf "b" + key) exactly when the
// innermost Applier says business keys (Guarded), and runs on its own
// ("o" + offset) otherwise, as the worker runs it under that Applier
// alone: Paced and ByTopic over an Applier that is no Keyer add no key of
// their own (the record key, empty here, used to be one, which queued
// every keyless record behind one another). The Finisher and the external
// effects of Guarded are kept by Wrap, Paced, ByTopic and a user's wrapper
// with Unwrap, nested or not; a user's wrapper without Unwrap loses them.
// A wrapper built with Wrap is a Keyer and a Finisher to a type assertion
// too.
func TestWrapKeepsCapabilities(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	ks, err := sink.ParseKeySource("header:order")
	if err != nil {
		t.Fatal(err)
	}
	g, err := sink.NewGuard(rdb, sink.WithKeySource(ks))
	if err != nil {
		t.Fatal(err)
	}
	guard := func() Applier { return Guarded(g, func(context.Context, string, *sink.Record) error { return nil }) }
	plain := func() Applier { return nopApplier{} }
	const keyed, alone = "border-7", "o7"
	tests := []struct {
		name     string
		a        Applier
		topic    string // the record's; "" is orders
		wantKey  string // worker.keyOf
		wantFin  bool   // finisherOf
		wantExt  bool   // external
		asserted bool   // a.(Finisher) says wantFin, a.(Keyer) isKeyer
		isKeyer  bool
	}{
		{"Guarded", guard(), "", keyed, true, true, true, true},
		{"Wrap(Guarded)", logged(guard()), "", keyed, true, true, true, true},
		{"Wrap(Wrap(Guarded))", logged(logged(guard())), "", keyed, true, true, true, true},
		{"own with Unwrap(Guarded)", &unwrapping{ownWrapper{Applier: guard()}}, "", keyed, true, true, false, false},
		{"Wrap(own with Unwrap(Guarded))", logged(&unwrapping{ownWrapper{Applier: guard()}}), "", keyed, true, true, true, true},
		{"own without Unwrap(Guarded)", &ownWrapper{Applier: guard()}, "", alone, false, false, false, false},
		{"Paced(Guarded)", Paced(guard(), 1000), "", keyed, true, true, true, true},
		{"ByTopic(Guarded)", ByTopic(map[string]Applier{"orders": guard()}), "", keyed, true, true, true, true},
		{"Paced(ByTopic(own with Unwrap(Guarded)))", Paced(ByTopic(map[string]Applier{"orders": &unwrapping{ownWrapper{Applier: guard()}}}), 1000), "", keyed, true, true, true, true},
		{"Wrap(plain)", logged(plain()), "", alone, false, false, true, false},
		{"Paced(plain)", Paced(plain(), 1000), "", alone, false, false, true, false},
		{"ByTopic(plain)", ByTopic(map[string]Applier{"orders": plain()}), "", alone, false, false, true, false},
		{"ByTopic(plain, Guarded): plain topic", ByTopic(map[string]Applier{"orders": plain(), "refunds": guard()}), "orders", alone, true, true, true, true},
		{"ByTopic(plain, Guarded): guarded topic", ByTopic(map[string]Applier{"orders": plain(), "refunds": guard()}), "refunds", keyed, true, true, true, true},
		{"ByTopic: topic without Applier", ByTopic(map[string]Applier{"refunds": guard()}), "orders", alone, true, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := newConfig([]GroupOpt{Brokers("localhost:9092"), Topics("orders"), Group("g"), Sink(tt.a)}, true)
			if err != nil {
				t.Fatal(err)
			}
			w := &worker{p: &runner{cfg: cfg}}
			topic := tt.topic
			if topic == "" {
				topic = "orders"
			}
			r := sink.Record{Topic: topic, Offset: 7, Headers: []sink.Header{{Key: "order", Value: []byte("order-7")}}}
			if got := w.keyOf(&r); got != tt.wantKey {
				t.Errorf("worker's key of a keyless record = %q, want %q", got, tt.wantKey)
			}
			if _, ok := finisherOf(cfg.applier); ok != tt.wantFin {
				t.Errorf("worker finds a Finisher: %v, want %v", ok, tt.wantFin)
			}
			if got := external(cfg.applier); got != tt.wantExt {
				t.Errorf("external = %v, want %v", got, tt.wantExt)
			}
			if !tt.asserted {
				return
			}
			_, isK := tt.a.(Keyer)
			_, isF := tt.a.(Finisher)
			if isK != tt.isKeyer || isF != tt.wantFin {
				t.Errorf("%T: Keyer %v, Finisher %v to a type assertion; want %v and %v", tt.a, isK, isF, tt.isKeyer, tt.wantFin)
			}
		})
	}
}

// TestWrappedGuardFinishes: in guard mode an effect runs, then Redis fails
// its done write (the batch's outcome is unknown) and stays down while the
// pipeline closes; Redis is back before the shutdown timeout. With the Sink
// a user's wrapper of Guarded, built with Wrap or with an Unwrap method of
// its own, the worker still finishes the batch through the wrapper at its
// term's end: pay-1's claim ends done, its effect having run once.
func TestWrappedGuardFinishes(t *testing.T) {
	tests := []struct {
		name string
		wrap func(Applier) Applier
	}{
		{"Wrap", logged},
		{"own with Unwrap", func(a Applier) Applier { return &unwrapping{ownWrapper{Applier: a}} }},
		{"Paced", func(a Applier) Applier { return Paced(a, 1000) }},
		{"ByTopic", func(a Applier) Applier { return ByTopic(map[string]Applier{"orders": a}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := payments(ctx, t, 3)
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
			defer rdb.Close()
			g := fastGuard(t, rdb, 30*time.Second)
			runs := map[string]int{}
			effect := func(_ context.Context, key string, _ *sink.Record) error {
				runs[key]++ // MaxInFlight is off: one effect at a time
				if key == "pay-1" && runs[key] == 1 {
					mr.SetError("LOADING Redis is loading the dataset in memory") // the outage starts after the call
				}
				return nil
			}
			// stalling forwards Finish to Guarded by hand; the wrapper under
			// test is the Sink, around it.
			st := &stalling{Applier: Guarded(g, effect), failed: make(chan struct{}), release: make(chan struct{})}
			p, err := New(Brokers(c.ListenAddrs()...), Topics("orders"), Group("g"), Sink(tt.wrap(st)), MaxBatch(3),
				CommitEvery(3), ShutdownTimeout(20*time.Second), Logger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			runDone := make(chan error, 1)
			go func() { runDone <- p.Run(ctx) }()
			select {
			case <-st.failed:
			case <-ctx.Done():
				t.Fatal("the done write never failed")
			}
			p.mu.Lock()
			w := p.workers[checkpoint.Partition{Topic: "orders"}]
			p.mu.Unlock()
			closed := make(chan error, 1)
			go func() { closed <- p.Close(ctx) }()
			select {
			case <-w.wake: // the term is ending: no retry of the batch may come
			case <-ctx.Done():
				t.Fatal("the worker was never asked to stop")
			}
			close(st.release)
			mr.SetError("")
			if err := <-closed; err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := <-runDone; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("Run: %v", err)
			}
			cl, ok, err := g.Lookup(ctx, "pay-1")
			if err != nil || !ok || cl.State != sink.ClaimDone {
				t.Errorf("claim of pay-1 after Close = %+v, %v, %v; want done (finished through the wrapper)", cl, ok, err)
			}
			if runs["pay-1"] != 1 {
				t.Errorf("pay-1's effect ran %d times, want once", runs["pay-1"])
			}
		})
	}
}
