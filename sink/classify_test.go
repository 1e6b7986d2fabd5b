package sink

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFinalRepliesClassified: Redis replies that no retry can fix come back
// per record wrapped in the sentinel the pipeline branches on, with nothing
// applied: a key of the wrong type or a non-integer total is a
// misconfiguration. (miniredis does not detect HINCRBY overflow; the real
// server's case, a bad value, is in integration/.)
func TestFinalRepliesClassified(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(set func(k, v string), hset func(k, f, v string))
		want  error
	}{
		{"ledger key of another type", func(_ func(k, v string), hset func(k, f, v string)) {
			hset("l:o1", "x", "1")
		}, ErrMisconfigured},
		{"totals field not an integer", func(_ func(k, v string), hset func(k, f, v string)) {
			hset("totals", "c", "abc")
		}, ErrMisconfigured},
		{"totals hash of another type", func(set func(k, v string), _ func(k, f, v string)) {
			set("totals", "x")
		}, ErrMisconfigured},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c := newRedis(t)
			tc.setup(func(k, v string) { _ = m.Set(k, v) }, func(k, f, v string) { m.HSet(k, f, v) })
			l, err := NewLedger(c, WithPrefix("l:"), WithEffect(Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}))
			if err != nil {
				t.Fatal(err)
			}
			r := order(0, 1, "o1", "c", 1)
			res, err := l.Apply(ctx, []Record{r})
			if err != nil {
				t.Fatalf("Apply = %v; want a per-record error", err)
			}
			if !errors.Is(res[0].Err, tc.want) {
				t.Fatalf("result error %v; want %v", res[0].Err, tc.want)
			}
			if tc.name != "ledger key of another type" && m.Exists("l:o1") {
				t.Fatal("a claim was written for a record whose effect failed")
			}
		})
	}
}

func TestSubMillisecondExpiryRefused(t *testing.T) {
	_, c := newRedis(t)
	if _, err := NewLedger(c, WithTTL(500*time.Microsecond)); err == nil {
		t.Error("NewLedger took a TTL below 1ms")
	}
	if _, err := NewGuard(c, WithLease(999*time.Microsecond)); err == nil {
		t.Error("NewGuard took a lease below 1ms")
	}
}
