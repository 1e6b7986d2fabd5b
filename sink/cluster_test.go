package sink

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestClusterSlots checks the Cluster rules without a cluster: NewLedger and
// the slot check do no I/O.
func TestClusterSlots(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer c.Close()
	totals := func(hash string) LedgerOpt {
		return WithEffect(Totals{Hash: hash, GroupField: "customer", AmountField: "amount_cents"})
	}
	if _, err := NewLedger(c, totals("totals")); err == nil {
		t.Error("cluster ledger with an effect and an untagged prefix was accepted")
	}
	if _, err := NewLedger(c); err != nil {
		t.Errorf("cluster ledger without an effect needs no tag: %v", err)
	}
	l, err := NewLedger(c, WithPrefix("{orders}:"), totals("{other}:totals"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := l.Apply(context.Background(), []Record{order(0, 0, "o1", "c", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rs[0].Err, ErrCrossSlot) {
		t.Errorf("err = %v, want ErrCrossSlot", rs[0].Err)
	}
}

func TestGuardRetry(t *testing.T) {
	m, c := newRedis(t)
	g := newGuard(t, c, WithRetry(Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond, Attempts: 20}))
	h := watchCalls(c)
	m.SetError("LOADING Redis is loading the dataset in memory")
	var n counter
	r := order(0, 1, "o1", "c", 1)
	done := make(chan error, 1)
	go func() { _, err := g.Do(context.Background(), &r, n.effect); done <- err }()
	h.await(t, "the claim to fail three times", func() bool { return h.failed.Load() >= 3 })
	m.SetError("")
	if err := <-done; err != nil || n.n.Load() != 1 {
		t.Errorf("Do = %v, runs %d", err, n.n.Load())
	}
	if f := h.failed.Load(); f < 3 {
		t.Errorf("%d failed calls before the claim landed, want at least 3", f)
	}
	m.SetError("LOADING Redis is loading the dataset in memory")
	g2 := newGuard(t, c) // fastRetry: gives up
	if _, err := g2.Do(context.Background(), &r, n.effect); !errors.Is(err, ErrUnknown) {
		t.Errorf("err = %v, want ErrUnknown", err)
	}
}
