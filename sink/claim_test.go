package sink

import (
	"errors"
	"testing"
	"time"
)

func TestClaimRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	for _, c := range []Claim{
		{Topic: "orders", Partition: 3, Offset: 1 << 40, Epoch: 17, At: at.UTC(), State: ClaimApplied},
		{Topic: "t\"ö", Partition: -1, Offset: 0, Epoch: -1, At: at.UTC(), State: ClaimPending, Owner: "tok"},
		{State: ClaimDone},
	} {
		s := c.Encode()
		got, err := DecodeClaim(s)
		if err != nil {
			t.Fatalf("DecodeClaim(%s): %v", s, err)
		}
		if !got.At.Equal(c.At) {
			t.Errorf("At %v, want %v", got.At, c.At)
		}
		got.At, c.At = time.Time{}, time.Time{}
		if got != c {
			t.Errorf("round trip %s: got %+v, want %+v", s, got, c)
		}
	}
	for _, bad := range []string{"", "1", "not json", `{"topic":"t"}`, `["applied"]`} {
		if _, err := DecodeClaim(bad); !errors.Is(err, ErrBadClaim) {
			t.Errorf("DecodeClaim(%q) err = %v, want ErrBadClaim", bad, err)
		}
	}
}

// TestBatchEncoding checks what a batch writes: one claim per distinct key,
// each naming its own record.
func TestBatchEncoding(t *testing.T) {
	ctx := t.Context()
	m, c := newRedis(t)
	l, err := NewLedger(c)
	if err != nil {
		t.Fatal(err)
	}
	batch := []Record{order(5, 100, "a", "c", 1), order(5, 101, "b", "c", 1), order(5, 102, "a", "c", 1)}
	for i := range batch {
		batch[i].Epoch = 9
	}
	if _, err := l.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if keys := m.Keys(); len(keys) != 2 {
		t.Fatalf("keys %v, want 2", keys)
	}
	for key, r := range map[string]*Record{"a": &batch[0], "b": &batch[1]} {
		s, _ := m.Get("shardpipe:ledger:" + key)
		cl, err := DecodeClaim(s)
		if err != nil || !cl.Names(r) || cl.State != ClaimApplied || cl.Owner != "" {
			t.Errorf("%s: claim %s (%v) does not name %s", key, s, err, r.at())
		}
	}
}

func TestSlot(t *testing.T) {
	// Values from the Redis Cluster specification and redis-cli CLUSTER KEYSLOT.
	for key, want := range map[string]uint16{
		"123456789":       0x31C3 % 16384,
		"foo":             12182,
		"{user1000}.a":    slot("user1000"),
		"{}x":             slot("{}x"),
		"{orders}:o1":     slot("orders"),
		"{orders}:totals": slot("orders"),
	} {
		if got := slot(key); got != want {
			t.Errorf("slot(%q) = %d, want %d", key, got, want)
		}
	}
	for prefix, want := range map[string]bool{"{orders}:": true, "orders:": false, "{}:": false, "a{b": false} {
		if hasHashTag(prefix) != want {
			t.Errorf("hasHashTag(%q) != %v", prefix, want)
		}
	}
}

// TestClaimNames: a claim names a record only for the same topic, partition,
// offset, epoch and member; epochs repeat across members and groups.
func TestClaimNames(t *testing.T) {
	base := Record{Topic: "orders", Partition: 2, Offset: 40, Epoch: 5, Member: "m-a"}
	c := claimFor(&base, ClaimApplied, time.Now())
	cases := []struct {
		name string
		edit func(r *Record)
		want bool
	}{
		{"same record, same term", func(*Record) {}, true},
		{"other member, same epoch", func(r *Record) { r.Member = "m-b" }, false},
		{"same member, next epoch", func(r *Record) { r.Epoch = 6 }, false},
		{"other offset", func(r *Record) { r.Offset = 41 }, false},
		{"other partition", func(r *Record) { r.Partition = 3 }, false},
		{"other topic", func(r *Record) { r.Topic = "payments" }, false},
	}
	for _, tc := range cases {
		r := base
		tc.edit(&r)
		if got := c.Names(&r); got != tc.want {
			t.Errorf("%s: Names = %v, want %v", tc.name, got, tc.want)
		}
	}
}
