package integration_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/sink"
)

// TestSinkFinalRepliesRealRedis: on the real server, replies no retry can fix
// come back per record with the sentinel the pipeline acts on, and no claim
// is written: an amount that overflows the total is the record's bad value;
// a ledger key or totals hash of the wrong type, or a total that is not an
// integer, is a misconfiguration that stops the pipeline.
func TestSinkFinalRepliesRealRedis(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cases := []struct {
		name  string
		setup func(prefix string) error
		want  error
	}{
		{"amount overflows the sum", func(p string) error {
			return rdb.HSet(ctx, p+"totals", "c", "9223372036854775807").Err()
		}, sink.ErrBadValue},
		{"total not an integer", func(p string) error { return rdb.HSet(ctx, p+"totals", "c", "abc").Err() }, sink.ErrMisconfigured},
		{"totals hash of another type", func(p string) error { return rdb.Set(ctx, p+"totals", "x", 0).Err() }, sink.ErrMisconfigured},
		{"ledger key of another type", func(p string) error { return rdb.HSet(ctx, p+"l:o1", "x", "1").Err() }, sink.ErrMisconfigured},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prefix := integration.RedisPrefix(t, rdb)
			if err := tc.setup(prefix); err != nil {
				t.Fatal(err)
			}
			l, err := sink.NewLedger(rdb, sink.WithPrefix(prefix+"l:"),
				sink.WithEffect(sink.Totals{Hash: prefix + "totals", GroupField: "customer", AmountField: "amount_cents"}))
			if err != nil {
				t.Fatal(err)
			}
			r := sink.Record{Topic: "orders", Offset: 1, Key: []byte("o1"), Value: []byte(`{"customer":"c","amount_cents":1}`)}
			res, err := l.Apply(ctx, []sink.Record{r})
			if err != nil {
				t.Fatalf("Apply = %v; want a per-record error", err)
			}
			if !errors.Is(res[0].Err, tc.want) {
				t.Fatalf("result error %v; want %v", res[0].Err, tc.want)
			}
			if tc.name != "ledger key of another type" {
				if n, _ := rdb.Exists(ctx, prefix+"l:o1").Result(); n != 0 {
					t.Fatal("a claim was written for a record whose effect failed")
				}
			}
		})
	}
}
