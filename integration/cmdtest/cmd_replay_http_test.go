package cmdtest_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdReplayHTTPEffect: `replay --effect http` applies as `run --effect
// http` does, on the real Kafka and Redis against a receiver in the test.
// After run POSTed 30 orders (and 6 re-sends suppressed), a replay of the
// whole topic calls nothing (0 applied, 36 suppressed); a dry run calls
// nothing either; the ledger's Redis keys deleted, a replay calls each
// order once more, with the same Idempotency-Key (the receiver's to
// absorb), and never a re-send.
func TestCmdReplayHTTPEffect(t *testing.T) {
	t.Parallel()
	const orders = 30
	e := newGuardReplayEnv(t, itest.BuildShardpipe(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var mu sync.Mutex
	calls := map[string]int{} // Idempotency-Key -> calls
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.Header.Get("Idempotency-Key")]++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	called := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(calls)
	}
	e.effect = []string{"--effect", "http", "--http-url", srv.URL + "/orders", "--http-timeout", "5s"}
	records := int64(e.produce(ctx, orders))
	e.run(ctx, orders)
	after := called()
	if len(after) != orders {
		t.Fatalf("run called %d keys, want %d", len(after), orders)
	}
	for k, n := range after {
		if n != 1 {
			t.Fatalf("run called %s %d times, want once", k, n)
		}
	}

	r := e.replay(ctx, "again", nil)
	if r.code != 0 || r.read != records || r.applied != 0 || r.suppressed != records || !maps.Equal(called(), after) {
		t.Fatalf("replay of what run applied: exit %d, read %d applied %d suppressed %d, %d keys called; want 0, %d, 0, %d, no call\n%s",
			r.code, r.read, r.applied, r.suppressed, len(called()), records, records, r.out)
	}

	e.dropClaims(ctx, orders)
	dry := e.replay(ctx, "dry", nil, "--dry-run")
	if dry.code != 0 || dry.applied != orders || dry.suppressed != records-orders || !maps.Equal(called(), after) {
		t.Fatalf("dry run: exit %d, would apply %d, suppress %d; want 0, %d, %d and no call\n%s",
			dry.code, dry.applied, dry.suppressed, orders, records-orders, dry.out)
	}

	r = e.replay(ctx, "claims-gone", nil)
	if r.code != 0 || r.read != records || r.applied != orders || r.suppressed != records-orders {
		t.Fatalf("replay after the ledger keys were deleted: exit %d, read %d applied %d suppressed %d; want 0, %d, %d, %d\n%s",
			r.code, r.read, r.applied, r.suppressed, records, orders, records-orders, r.out)
	}
	now := called()
	if len(now) != orders {
		t.Fatalf("%d keys called, want %d", len(now), orders)
	}
	for k, n := range now {
		if n != 2 {
			t.Errorf("%s called %d times, want twice: once by run, once by the replay that found its claim gone", k, n)
		}
	}
	if n := e.claims(ctx); n != orders {
		t.Fatalf("ledger keys after the replay: %d, want %d", n, orders)
	}
}
