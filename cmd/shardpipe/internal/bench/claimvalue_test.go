package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/sink"
)

// ledgerClaim is the claim a sink.Ledger writes for a record of the bench's
// topic as the pipeline mode m of the round tagged "dn8z15tulw1v-0" consumes it, with
// the member ID a broker gave franz-go in a real run.
func ledgerClaim(t *testing.T, m Mode, topic string, partition int32, offset int64) string {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	l, err := sink.NewLedger(rdb, sink.WithPrefix("p:"), sink.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	r := sink.Record{Topic: topic, Partition: partition, Offset: offset, Epoch: 1, Key: []byte(Key(1)),
		Member: "kgo-2b3af32c-7a17-452f-9a1f-fa96467cfa72", Group: "shardpipe-bench-dn8z15tulw1v-0-" + string(m)}
	if res, err := l.Apply(context.Background(), []sink.Record{r}); err != nil || res[0].Err != nil {
		t.Fatalf("apply: %v %v", err, res)
	}
	v, err := mr.Get("p:" + Key(1))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCeilingValueIsAClaim: the sink ceiling (b) and the naive consumer (c)
// write a value of the size of the claim the pipeline (d) writes for the
// same topic in the same round, so that the ceiling does per key the work
// (d) must do, not less.
func TestCeilingValueIsAClaim(t *testing.T) {
	for _, records := range []int{10_000, 1_000_000, 4_000_000} {
		topic := fmt.Sprintf("shardpipe-bench-%d", records)
		for _, m := range []Mode{Sink, Naive} {
			spec := Spec{Mode: m, Topic: topic, Records: records, Group: "shardpipe-bench-dn8z15tulw1v-0-" + string(m)}
			// The last offset of a partition of the default 12.
			want := ledgerClaim(t, Shardpipe, topic, 11, int64(records/12))
			if got := claimValue(spec); !sameSize(got, want) {
				t.Errorf("%d records, mode %s: value of %d bytes %q, want %d like the pipeline's claim %q",
					records, m, len(got), got, len(want), want)
			}
		}
	}
}

// TestLedgerCeilings: the ledger ceiling (k, record mode) and the scripted
// ceiling (j, with totals) claim every order once (a run again applies
// none), with claims of the size the mode each bounds writes: (d) and (e).
// (k) writes nothing but the claims.
func TestLedgerCeilings(t *testing.T) {
	for _, c := range []struct{ mode, of Mode }{{Ledger, Shardpipe}, {Scripted, Totals}} {
		t.Run(string(c.mode), func(t *testing.T) {
			m := miniredis.RunT(t)
			records := 1200
			topic := fmt.Sprintf("shardpipe-bench-%d", records)
			spec := Spec{Mode: c.mode, Redis: m.Addr(), Topic: topic, Records: records, Prefix: "p:", TTL: time.Hour,
				Group: "shardpipe-bench-dn8z15tulw1v-0-" + string(c.mode)}
			ctx := context.Background()
			res, err := runScripted(ctx, spec)
			if err != nil || res.Records != int64(records) || res.Applied != int64(records) || res.Seconds <= 0 {
				t.Fatalf("first run: %+v, %v; want %d records all applied", res, err, records)
			}
			if keys := m.Keys(); c.mode == Ledger && len(keys) != records {
				t.Fatalf("%d keys, want only the %d claims (no effect's keys)", len(keys), records)
			}
			got, err := m.Get("p:" + Key(records-1))
			if err != nil {
				t.Fatal(err)
			}
			if want := ledgerClaim(t, c.of, topic, 11, int64(records/12-1)); !sameSize(got, want) {
				t.Errorf("claim of %d bytes %q, want %d like mode %s's %q", len(got), got, len(want), c.of, want)
			}
			if res, err = runScripted(ctx, spec); err != nil || res.Applied != 0 {
				t.Fatalf("second run: %+v, %v; want nothing applied", res, err)
			}
		})
	}
}

// sameSize reports whether claims a and b are of the same size but for the
// time they hold, which takes up to 10 bytes less (the dot and 9 digits)
// when its nanoseconds end in zeros (RFC 3339 with nanoseconds drops them).
func sameSize(a, b string) bool {
	d := len(a) - len(b)
	return d >= -10 && d <= 10
}
