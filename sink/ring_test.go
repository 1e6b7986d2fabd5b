package sink

import (
	"context"
	"fmt"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestLedgerOnRing: a client that routes a command by its first key (here
// a Ring of two shards) gets each key's own commands, not the batch script
// (which would land every claim on the first key's shard): a second term
// meeting each key alone finds its claim and applies none again. With an
// effect NewLedger refuses such a client: the effect's keys and the ledger
// key must be written by one script on one node.
func TestLedgerOnRing(t *testing.T) {
	a, b := miniredis.RunT(t), miniredis.RunT(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr(), "b": b.Addr()}})
	t.Cleanup(func() { _ = ring.Close() })
	ctx := context.Background()
	if _, err := NewLedger(ring, WithEffect(Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"})); err == nil {
		t.Error("NewLedger with an effect on a Ring: nil error, want a refusal")
	}
	l, err := NewLedger(ring)
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]Record, 20)
	for i := range batch {
		batch[i] = Record{Topic: "orders", Offset: int64(i), Epoch: 1, Member: "m1", Group: "g", Key: fmt.Appendf(nil, "k%d", i)}
	}
	res, err := l.Apply(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil || r.Outcome != Applied {
			t.Fatalf("record %d: %v %v, want applied", i, r.Outcome, r.Err)
		}
	}
	if len(a.Keys()) == 0 || len(b.Keys()) == 0 {
		t.Errorf("claims on the shards: %d and %d, want them spread over both", len(a.Keys()), len(b.Keys()))
	}
	again := 0
	for i := range batch {
		r := batch[i]
		r.Epoch, r.Member = 2, "m2"
		res, err := l.Apply(ctx, []Record{r})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Outcome == Applied {
			again++
		}
	}
	if again != 0 {
		t.Errorf("%d of %d keys applied again by the next term: their claims were written on another shard", again, len(batch))
	}
}
