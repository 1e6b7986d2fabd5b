package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// blockingApplier holds every batch until release closes, and reports each
// batch it was handed.
type blockingApplier struct {
	entered chan struct{}
	release chan struct{}
}

func (b blockingApplier) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	select {
	case <-b.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res := make([]sink.Result, len(batch))
	for i := range res {
		res[i].Outcome = sink.Applied
	}
	return res, nil
}

// TestLostStopsWithoutCommit: when franz-go reports partitions lost, their
// worker stops at once, its in-flight batch stays unknown, and no commit of
// that term can land afterwards.
func TestLostStopsWithoutCommit(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 20 {
		prod.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i))})
	}
	prod.Close()

	app := blockingApplier{entered: make(chan struct{}, 1), release: make(chan struct{})}
	var mu sync.Mutex
	var events []Event
	p, err := New(Brokers(c.ListenAddrs()...), Topics("orders"), Group("g"), Sink(app), CommitEvery(5),
		Logger(slog.New(slog.DiscardHandler)), Observe(func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-app.entered:
	case <-ctx.Done():
		t.Fatal("no batch reached the sink")
	}
	part := checkpoint.Partition{Topic: "orders"}
	held, ok := p.store.Held(part)
	if !ok {
		t.Fatal("partition not held while its batch is in flight")
	}
	p.onLost(ctx, p.cl, map[string][]int32{"orders": {0}})
	if _, ok := p.store.Held(part); ok {
		t.Fatal("partition still held after it was lost")
	}
	close(app.release)
	if err := p.store.CommitAt(ctx, part, held.Epoch, 5, -1); !errors.Is(err, checkpoint.ErrStaleEpoch) {
		t.Fatalf("commit of the lost term = %v, want ErrStaleEpoch", err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	lost := false
	for _, e := range events {
		switch e.Kind {
		case Committed:
			t.Fatalf("a commit landed: %+v", e)
		case Lost:
			lost = true
		}
	}
	if !lost {
		t.Fatal("no Lost event")
	}
}
