package sink

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// newFakeCluster is a cluster client whose one node (a miniredis) serves
// every slot; the node may be told to answer MOVED to itself, as a node does
// while a failover or a slot migration is under way and the client keeps
// being sent back and forth until its redirects run out.
func newFakeCluster(t *testing.T) (*miniredis.Miniredis, *redis.ClusterClient) {
	t.Helper()
	m := miniredis.RunT(t)
	addr := m.Addr() // the client may reload its slots after the test
	c := redis.NewClusterClient(&redis.ClusterOptions{
		ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) {
			return []redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{ID: "n1", Addr: addr}}}}, nil
		},
		Protocol: 2, MaxRetries: -1, MaxRedirects: 2, DialTimeout: 200 * time.Millisecond,
	})
	t.Cleanup(func() { _ = c.Close() })
	return m, c
}

// TestClusterRedirectRetried: on a cluster client, a MOVED reply that comes
// back after the client's own redirects ran out means the cluster is
// changing (a failover, a migration), not that it is set up wrong: the
// ledger and the guard retry it with their backoff and succeed once the
// cluster settles, instead of refusing the record as misconfigured (which
// stops the pipeline).
func TestClusterRedirectRetried(t *testing.T) {
	for _, mode := range []string{"ledger", "ledger with totals", "guard"} {
		t.Run(mode, func(t *testing.T) {
			m, c := newFakeCluster(t)
			h := watchCalls(c)
			m.SetError("MOVED 1234 " + m.Addr())
			retry := WithRetry(Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond, Attempts: 50})
			r := order(0, 1, "o1", "c", 7)
			done := make(chan error, 1)
			var out Outcome
			switch mode {
			case "guard":
				g, err := NewGuard(c, retry, WithLease(time.Second))
				if err != nil {
					t.Fatal(err)
				}
				go func() {
					o, err := g.Do(context.Background(), &r, func(context.Context, string) error { return nil })
					out = o
					done <- err
				}()
			default:
				opts := []LedgerOpt{retry}
				if mode == "ledger with totals" {
					opts = append(opts, WithPrefix("{o}:"),
						WithEffect(Totals{Hash: "{o}:totals", GroupField: "customer", AmountField: "amount_cents"}))
				}
				l, err := NewLedger(c, opts...)
				if err != nil {
					t.Fatal(err)
				}
				go func() {
					rs, err := l.Apply(context.Background(), []Record{r})
					if err == nil {
						out, err = rs[0].Outcome, rs[0].Err
					}
					done <- err
				}()
			}
			for h.failed.Load() < 3 {
				select {
				case err := <-done:
					t.Fatalf("%s ended after %d failed calls while the cluster answered MOVED: outcome %v, err %v; want it retried",
						mode, h.failed.Load(), out, err)
				case <-h.signal:
				case <-time.After(10 * time.Second):
					t.Fatalf("%d failed calls in 10s", h.failed.Load())
				}
			}
			m.SetError("")
			if err := <-done; err != nil || out != Applied {
				t.Fatalf("after the cluster settled: outcome %v, err %v; want Applied", out, err)
			}
			if mode == "ledger with totals" {
				if got := m.HGet("{o}:totals", "c"); got != strconv.Itoa(7) {
					t.Fatalf("totals = %q, want 7", got)
				}
			}
		})
	}
}

// TestSingleRedirectMisconfigured: on a single-node client MOVED means the
// server is a cluster node addressed as one: a misconfiguration, not retried.
func TestSingleRedirectMisconfigured(t *testing.T) {
	m, c := newRedis(t)
	m.SetError("MOVED 1234 127.0.0.1:1")
	l, err := NewLedger(c, WithRetry(fastRetry()))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := l.Apply(context.Background(), []Record{order(0, 1, "o1", "c", 7)})
	if err != nil || !errors.Is(rs[0].Err, ErrMisconfigured) || !strings.Contains(rs[0].Err.Error(), "MOVED") {
		t.Fatalf("Apply = %v, %v; want the record refused as misconfigured (MOVED)", rs, err)
	}
}
