package sink

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestLedgerApply(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		opts   []LedgerOpt
		batch1 []Record
		batch2 []Record
		want1  []string
		want2  []string
	}{
		{
			name:   "fresh keys apply, a replay of the same record is redelivered, a re-send suppressed",
			batch1: []Record{order(0, 0, "o1", "c", 1), order(0, 1, "o2", "c", 1)},
			batch2: []Record{withEpoch(order(0, 0, "o1", "c", 1), 2), order(0, 2, "o3", "c", 1), order(0, 3, "o2", "c", 1)},
			want1:  []string{"applied", "applied"},
			want2:  []string{"redelivered", "applied", "suppressed"},
		},
		{
			name:   "duplicate key in one batch: first applies",
			batch1: []Record{order(0, 0, "o1", "c", 1), order(0, 1, "o1", "c", 1), order(0, 2, "o2", "c", 1), order(0, 3, "o1", "c", 1)},
			want1:  []string{"applied", "suppressed", "applied", "suppressed"},
		},
		{
			name:   "same record same epoch again counts as applied",
			batch1: []Record{order(0, 0, "o1", "c", 1)},
			batch2: []Record{order(0, 0, "o1", "c", 1)},
			want1:  []string{"applied"},
			want2:  []string{"applied"},
		},
		{
			name:   "missing key is an error, others apply",
			batch1: []Record{{Topic: "orders", Offset: 5}, order(0, 6, "o1", "c", 1)},
			want1:  []string{"err", "applied"},
		},
		{
			name:   "effect mode: duplicates and bad values",
			opts:   []LedgerOpt{WithEffect(Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"})},
			batch1: []Record{order(0, 0, "o1", "c", 1), order(0, 1, "o1", "c", 1), {Topic: "orders", Offset: 2, Key: []byte("o2"), Value: []byte("nope")}},
			batch2: []Record{withEpoch(order(0, 0, "o1", "c", 1), 2), order(0, 2, "o2", "c", 1)},
			want1:  []string{"applied", "suppressed", "err"},
			want2:  []string{"redelivered", "applied"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newRedis(t)
			l, err := NewLedger(c, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for i, step := range []struct {
				batch []Record
				want  []string
			}{{tt.batch1, tt.want1}, {tt.batch2, tt.want2}} {
				if step.batch == nil {
					continue
				}
				rs, err := l.Apply(ctx, step.batch)
				if err != nil {
					t.Fatalf("apply %d: %v", i+1, err)
				}
				if got := outcomes(rs); !slices.Equal(got, step.want) {
					t.Errorf("apply %d: got %v, want %v (%v)", i+1, got, step.want, rs)
				}
			}
		})
	}
}

func withEpoch(r Record, e int64) Record { r.Epoch = e; return r }

func TestLedgerClaimAndTTL(t *testing.T) {
	ctx := context.Background()
	m, c := newRedis(t)
	l, err := NewLedger(c, WithPrefix("p:"), WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	r := order(3, 42, "o9", "c", 1)
	r.Epoch = 7
	before := time.Now()
	if _, err := l.Apply(ctx, []Record{r}); err != nil {
		t.Fatal(err)
	}
	if got := m.TTL("p:o9"); got != time.Hour {
		t.Errorf("TTL = %v, want 1h", got)
	}
	cl, ok, err := l.Lookup(ctx, "o9")
	if err != nil || !ok {
		t.Fatalf("Lookup: %v %v", ok, err)
	}
	if !cl.Names(&r) || cl.State != ClaimApplied || cl.At.Before(before.Add(-time.Second)) {
		t.Errorf("claim %+v does not name %s epoch 7", cl, r.at())
	}
	if _, ok, _ := l.Lookup(ctx, "nope"); ok {
		t.Error("Lookup of an absent key found a claim")
	}
	m.FastForward(time.Hour)
	rs, err := l.Apply(ctx, []Record{withEpoch(r, 8)})
	if err != nil || rs[0].Outcome != Applied {
		t.Errorf("after the TTL a replay applies again: %v %v", rs, err)
	}
}

func TestLedgerTotals(t *testing.T) {
	ctx := context.Background()
	m, c := newRedis(t)
	l, err := NewLedger(c, WithEffect(Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}))
	if err != nil {
		t.Fatal(err)
	}
	batch := []Record{
		order(0, 0, "o1", "alice", 100),
		order(0, 1, "o2", "bob", 250),
		order(0, 2, "o1", "alice", 100), // duplicate key
		order(0, 3, "o3", "alice", -30),
		{Topic: "orders", Offset: 4, Key: []byte("o4"), Value: []byte(`{"customer":"bob","amount_cents":1.5}`)},
		{Topic: "orders", Offset: 5, Key: []byte("o5"), Value: []byte(`{"amount_cents":1}`)},
		{Topic: "orders", Offset: 6, Key: []byte("o6"), Value: []byte(`{"customer":"bob","amount_cents":"7"}`)},
	}
	rs, err := l.Apply(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"applied", "applied", "suppressed", "applied", "err", "err", "err"}
	if got := outcomes(rs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, i := range []int{4, 5, 6} {
		if !errors.Is(rs[i].Err, ErrBadValue) {
			t.Errorf("record %d: err %v, want ErrBadValue", i, rs[i].Err)
		}
		if m.Exists("shardpipe:ledger:" + rs[i].Key) {
			t.Errorf("record %d with a bad value was claimed", i)
		}
	}
	// Replay everything under a new epoch: nothing changes.
	for i := range batch {
		batch[i].Epoch = 2
	}
	if _, err := l.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if a, b := m.HGet("totals", "alice"), m.HGet("totals", "bob"); a != "70" || b != "250" {
		t.Errorf("totals alice=%s bob=%s, want 70 and 250", a, b)
	}
}

func TestLedgerWrongTypeIsPerRecord(t *testing.T) {
	ctx := context.Background()
	m, c := newRedis(t)
	l, err := NewLedger(c, WithEffect(Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}))
	if err != nil {
		t.Fatal(err)
	}
	m.Set("totals", "not a hash")
	rs, err := l.Apply(ctx, []Record{order(0, 0, "o1", "a", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Err == nil {
		t.Fatal("HINCRBY on a string did not fail")
	}
	if m.Exists("shardpipe:ledger:o1") {
		t.Error("a failed effect left its claim behind")
	}
}

func TestNewLedgerOptions(t *testing.T) {
	_, c := newRedis(t)
	for _, tt := range []struct {
		name string
		opt  LedgerOpt
	}{
		{"zero ttl", WithTTL(0)},
		{"empty prefix", WithPrefix("")},
		{"bad backoff", WithRetry(Backoff{Initial: time.Second, Max: time.Millisecond, Attempts: 1})},
		{"no attempts", WithRetry(Backoff{Initial: time.Millisecond, Max: time.Second})},
		{"half totals", WithEffect(Totals{Hash: "h"})},
	} {
		if _, err := NewLedger(c, tt.opt); err == nil {
			t.Errorf("%s: NewLedger accepted it", tt.name)
		}
	}
	if _, err := NewLedger(nil); err == nil {
		t.Error("NewLedger(nil) succeeded")
	}
}
