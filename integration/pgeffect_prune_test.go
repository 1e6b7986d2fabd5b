package integration_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/pgeffect"
)

// TestPgEffectPrune: on a real PostgreSQL, Prune deletes only inbox rows
// recorded before the cutoff, oldest first, at most batch per call; a key
// whose row went is applied again when its record comes back (what
// pruning too early costs, so Keep must cover the topic's retention).
func TestPgEffectPrune(t *testing.T) {
	t.Parallel()
	f := newPgFixture(t)
	ctx := context.Background()
	for i := range 5 {
		r := sinkOrder(0, int64(i), 1, fmt.Sprintf("o-%d", i), "c", 5)
		if err := f.eff.Do(ctx, string(r.Key), &r); err != nil {
			t.Fatal(err)
		}
	}
	// o-0, o-1, o-2 were recorded 3, 2 and 1 hours ago; o-3 and o-4 now.
	for i, age := range []string{"3 hours", "2 hours", "1 hour"} {
		if _, err := f.pool.Exec(ctx, "UPDATE "+f.inbox+" SET applied_at = now() - $1::interval WHERE key = $2", age, fmt.Sprintf("o-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	cutoff := time.Now().Add(-30 * time.Minute)
	for _, want := range []struct {
		deleted int64
		gone    []string
	}{{2, []string{"o-0", "o-1"}}, {1, []string{"o-2"}}, {0, nil}} {
		n, err := f.eff.Prune(ctx, cutoff, 2)
		if err != nil || n != want.deleted {
			t.Fatalf("Prune = %d, %v; want %d deleted", n, err, want.deleted)
		}
		for _, k := range want.gone {
			if f.inInbox(t, k) {
				t.Fatalf("after deleting %d, %s is still in the inbox: the oldest go first", n, k)
			}
		}
	}
	for _, k := range []string{"o-3", "o-4"} {
		if !f.inInbox(t, k) {
			t.Fatalf("%s, recorded after the cutoff, was pruned", k)
		}
	}
	works := f.works.Load()
	r := sinkOrder(0, 0, 2, "o-0", "c", 5)
	if err := f.eff.Do(ctx, "o-0", &r); err != nil {
		t.Fatal(err)
	}
	if f.works.Load() != works+1 || f.rows(t, "o-0") != 2 {
		t.Fatalf("a pruned key read again: works %d -> %d, rows %d; want its Work run again (2 rows)", works, f.works.Load(), f.rows(t, "o-0"))
	}
	if _, err := f.eff.Prune(ctx, cutoff, 0); err == nil {
		t.Fatal("Prune with batch 0: want an error")
	}
}

// TestPgEffectPrunerBounded: the background Pruner deletes the rows older
// than Keep at most Batch per tick, and logs each batch.
func TestPgEffectPrunerBounded(t *testing.T) {
	t.Parallel()
	f := newPgFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 7 {
		r := sinkOrder(0, int64(i), 1, fmt.Sprintf("p-%d", i), "c", 5)
		if err := f.eff.Do(ctx, string(r.Key), &r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.pool.Exec(ctx, "UPDATE "+f.inbox+" SET applied_at = now() - interval '2 days' WHERE key <> 'p-6'"); err != nil {
		t.Fatal(err)
	}
	batches := make(chan int64, 16)
	log := slog.New(batchHandler{batches})
	done := make(chan error, 1)
	go func() {
		done <- pgeffect.Pruner{Effect: f.eff, Keep: 24 * time.Hour, Every: 20 * time.Millisecond, Batch: 2, Logger: log}.Run(ctx)
	}()
	var total int64
	for total < 6 {
		select {
		case n := <-batches:
			if n > 2 {
				t.Fatalf("a tick deleted %d rows, want at most the batch, 2", n)
			}
			total += n
		case err := <-done:
			t.Fatalf("Pruner.Run ended: %v", err)
		}
	}
	cancel()
	<-done
	if !f.inInbox(t, "p-6") || f.inInbox(t, "p-0") || f.inInbox(t, "p-5") {
		t.Fatal("the Pruner kept an old row or deleted the recent one")
	}
}

// batchHandler sends the deleted count of each "pruned inbox rows" line.
type batchHandler struct{ c chan<- int64 }

func (batchHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h batchHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "pruned inbox rows" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "deleted" {
			h.c <- a.Value.Int64()
		}
		return true
	})
	return nil
}
func (h batchHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h batchHandler) WithGroup(string) slog.Handler      { return h }
