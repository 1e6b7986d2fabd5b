package sink

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// benchOrders returns n records shaped like the bench topic's: an order ID
// key, the same ID in a header and in a ~200-byte JSON value.
func benchOrders(n int) []Record {
	rs := make([]Record, n)
	for i := range rs {
		id := fmt.Sprintf("ord-%09d", i)
		rs[i] = Record{Topic: "orders", Partition: int32(i % 12), Offset: int64(i), Epoch: 3,
			Member: "kgo-0a1b2c3d-4e5f-6789-abcd-ef0123456789", Key: []byte(id),
			Headers: []Header{{Key: "trace", Value: []byte("x")}, {Key: "order_id", Value: []byte(id)}},
			Value: fmt.Appendf(nil, `{"order_id":%q,"customer":"cust-%03d","amount_cents":%d,"created_at":"2026-01-01T00:00:00Z","note":"%0100d"}`,
				id, i%1000, 100+i%99901, 0),
			Timestamp: time.Unix(1_700_000_000, 0)}
	}
	return rs
}

// BenchmarkKeyExtract compares the three key sources side by side on the
// same records: the record key, a header, a JSON field of the value (by the
// scanner, and by the encoding/json implementation it replaced).
func BenchmarkKeyExtract(b *testing.B) {
	recs := benchOrders(1024)
	for _, spec := range []string{"key", "header:order_id", "json:order_id"} {
		ks, err := ParseKeySource(spec)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(spec, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := ks.Extract(&recs[i&1023]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	b.Run("json:order_id/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := oracleJSONScalar(recs[i&1023].Value, "order_id"); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkTotalsArgs compares Totals.Args with the encoding/json
// implementation it replaced, on the bench's orders.
func BenchmarkTotalsArgs(b *testing.B) {
	recs := benchOrders(1024)
	tot := Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}
	for _, impl := range []struct {
		name string
		args func(*Record) ([]string, []any, error)
	}{
		{"scanner", func(r *Record) ([]string, []any, error) { return tot.Args(r, "") }},
		{"encoding-json", func(r *Record) ([]string, []any, error) { return oracleTotalsArgs(tot, r) }},
	} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, _, err := impl.args(&recs[i&1023]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkClaimEncode compares the ledger's claim encoder with
// encoding/json, which writes the same bytes by reflection.
func BenchmarkClaimEncode(b *testing.B) {
	recs := benchOrders(1024)
	at := time.Now()
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		i := 0
		for b.Loop() {
			buf, _ = appendClaim(buf[:0], claimFor(&recs[i&1023], ClaimApplied, at))
			_ = string(buf)
			i++
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := json.Marshal(claimFor(&recs[i&1023], ClaimApplied, at)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkClaimCompare compares recognising a foreign claim (every
// suppressed record of a replay) by bytes with decoding it.
func BenchmarkClaimCompare(b *testing.B) {
	recs := benchOrders(1024)
	at := time.Now()
	priors := make([]string, len(recs))
	for i := range recs {
		old := recs[i]
		old.Epoch, old.Member = 1, "kgo-earlier-member"
		priors[i] = claimFor(&old, ClaimApplied, at).Encode()
	}
	b.Run("bytes", func(b *testing.B) {
		b.ReportAllocs()
		var scratch []byte
		i := 0
		for b.Loop() {
			if classifyPrior(priors[i&1023], &recs[i&1023], &scratch) != priorSameRecord {
				b.Fatal("an earlier term's claim for the same record not recognised")
			}
			i++
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c, err := DecodeClaim(priors[i&1023])
			if err != nil || c.Names(&recs[i&1023]) {
				b.Fatal("foreign claim taken for own", err)
			}
			i++
		}
	})
}

// BenchmarkBatchEncode measures what the ledger does per record before the
// round trip, for a batch of 500 (the default MaxBatch): key, ledger key,
// claim, and the go-redis command(s), side by side: the batch claim script
// (one command for the batch; with the totals effect too) against the
// per-key pipeline (two commands per record, as on Redis Cluster). Nothing
// is sent, so no server is involved.
func BenchmarkBatchEncode(b *testing.B) {
	const size = 500
	recs := benchOrders(size)
	for i := range recs {
		recs[i].Partition = 0 // a batch is one partition's
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	ctx := context.Background()
	for _, effect := range []bool{false, true} {
		var opts []LedgerOpt
		if effect {
			opts = append(opts, WithEffect(Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}))
		}
		l, err := NewLedger(c, opts...)
		if err != nil {
			b.Fatal(err)
		}
		for _, scripted := range []bool{true, false} {
			if effect && !scripted {
				continue // with an effect the Ledger always sends the batch script
			}
			name := "effect=" + strconv.FormatBool(effect) + "/script=" + strconv.FormatBool(scripted)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				results := make([]Result, size)
				for b.Loop() {
					clear(results)
					sc := l.scratch(size)
					todo, _ := l.prepareBatch(recs, results, sc)
					if scripted {
						sc.args = l.scriptArgs(sc.args[:0], todo)
						_ = redis.NewCmd(ctx, sc.args...)
					} else {
						p := c.Pipeline()
						for _, w := range todo {
							w.claim = string(w.claimBytes)
						}
						queue(ctx, l, p, todo)
						p.Discard()
					}
					l.release(sc)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/record")
			})
		}
	}
}

// queue adds the writes to p as Ledger.pipe does (record mode on Redis
// Cluster).
func queue(ctx context.Context, l *Ledger, p redis.Pipeliner, todo []*write) {
	for _, w := range todo {
		p.Do(ctx, "pexpire", w.key, l.ttlArg, "gt")
		p.SetArgs(ctx, w.key, w.claim, redis.SetArgs{Mode: "NX", TTL: l.cfg.ttl, Get: true})
	}
}
