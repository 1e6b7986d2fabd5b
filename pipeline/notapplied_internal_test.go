package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/sink"
)

// TestTermEndLeavesUnsentEffect: in guard mode the term ends (the partition
// lost, as to a zombie whose heartbeat met UNKNOWN_MEMBER_ID, or Run's
// context ending) while pay-1's effect is under way, and the effect, its
// context ended, reports that it sent nothing (sink.ErrNotApplied, as the
// HTTP effect does for a call that never had a connection). The worker's
// end-of-term finishing must not mark pay-1 done: the next owner runs it,
// and every effect happens exactly once. Marking it done, as for an effect
// that may have happened, loses pay-1: the next owner takes it as done.
func TestTermEndLeavesUnsentEffect(t *testing.T) {
	revoke := map[string][]int32{"orders": {0}}
	for _, tc := range []struct {
		name string
		end  func(p *Pipeline, cancelRun context.CancelFunc, runDone <-chan error) error
	}{
		{"lost", func(p *Pipeline, _ context.CancelFunc, _ <-chan error) error {
			p.onLost(context.Background(), p.cl, revoke)
			return nil
		}},
		{"run context ended", func(_ *Pipeline, cancelRun context.CancelFunc, runDone <-chan error) error {
			cancelRun()
			return <-runDone
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := payments(ctx, t, 3)
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
			defer rdb.Close()
			newGuard := func() *sink.Guard { return fastGuard(t, rdb, 30*time.Second) }
			var mu sync.Mutex
			happened := map[string]int{}
			calls := 0
			started := make(chan struct{})
			effect := func(ctx context.Context, key string, _ *sink.Record) error {
				mu.Lock()
				calls++
				first := key == "pay-1" && calls == 2
				mu.Unlock()
				if first {
					close(started)
					<-ctx.Done() // the term ends before a connection was had
					return fmt.Errorf("POST /pay: %w: %w", sink.ErrNotApplied, ctx.Err())
				}
				mu.Lock()
				happened[key]++
				mu.Unlock()
				return nil
			}
			opts := func(a Applier, commits chan<- int64) []GroupOpt {
				return []GroupOpt{Brokers(c.ListenAddrs()...), Topics("orders"), Group("g"), Sink(a), MaxBatch(3),
					CommitEvery(3), RevokeTimeout(20 * time.Second), ShutdownTimeout(time.Second),
					Logger(slog.New(slog.DiscardHandler)), Observe(func(e Event) {
						if e.Kind == Committed {
							commits <- e.Offset
						}
					})}
			}
			g := newGuard()
			p, err := New(opts(Guarded(g, effect), make(chan int64, 16))...)
			if err != nil {
				t.Fatal(err)
			}
			runCtx, cancelRun := context.WithCancel(ctx)
			defer cancelRun()
			runDone := make(chan error, 1)
			go func() { runDone <- p.Run(runCtx) }()
			select {
			case <-started:
			case <-ctx.Done():
				t.Fatal("pay-1's effect never started")
			}
			if err := tc.end(p, cancelRun, runDone); err != nil {
				t.Fatalf("ending the term: %v", err)
			}
			if tc.name == "lost" {
				if err := p.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if cl, ok, err := g.Lookup(ctx, "pay-1"); err != nil || (ok && cl.State == sink.ClaimDone) {
				t.Errorf("pay-1 once the term ended: %+v, %v, %v; want no done claim: its effect did not happen", cl, ok, err)
			}

			commits := make(chan int64, 16)
			nextOwner(ctx, t, opts(Guarded(newGuard(), effect), commits), commits, 3)
			mu.Lock()
			defer mu.Unlock()
			for i := range 3 {
				if k := fmt.Sprintf("pay-%d", i); happened[k] != 1 {
					t.Errorf("effect for %s happened %d times, want exactly once", k, happened[k])
				}
			}
		})
	}
}
