package sink

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// BenchmarkApply compares, side by side, a pipelined batch of 100 records
// with one round trip per record, each with and without the Totals effect,
// and logs the ratios. It runs on miniredis (in-process, so round trips are
// cheap and the ratios are a floor) unless REDIS_ADDR names a real server.
func BenchmarkApply(b *testing.B) {
	const batchSize = 100
	var c redis.UniversalClient
	if addr := os.Getenv("REDIS_ADDR"); addr != "" {
		c = redis.NewClient(&redis.Options{Addr: addr})
	} else {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		c = redis.NewClient(&redis.Options{Addr: m.Addr()})
	}
	defer c.Close()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	nsPerRecord := map[string]float64{}
	for _, effect := range []bool{false, true} {
		for _, pipelined := range []bool{true, false} {
			name := fmt.Sprintf("effect=%v/pipelined=%v", effect, pipelined)
			prefix := "bench:" + run + ":" + name + ":"
			opts := []LedgerOpt{WithPrefix(prefix), WithTTL(time.Minute)}
			if effect {
				opts = append(opts, WithEffect(Totals{Hash: prefix + "totals", GroupField: "customer", AmountField: "amount_cents"}))
			}
			l, err := NewLedger(c, opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(name, func(b *testing.B) {
				batch := make([]Record, batchSize)
				next := 0
				ctx := context.Background()
				for b.Loop() {
					for i := range batch {
						batch[i] = order(0, int64(next), "o"+strconv.Itoa(next), "c"+strconv.Itoa(next%7), 100)
						next++
					}
					if pipelined {
						if _, err := l.Apply(ctx, batch); err != nil {
							b.Fatal(err)
						}
						continue
					}
					for i := range batch {
						if _, err := l.Apply(ctx, batch[i:i+1]); err != nil {
							b.Fatal(err)
						}
					}
				}
				per := float64(b.Elapsed().Nanoseconds()) / float64(b.N*batchSize)
				b.ReportMetric(per, "ns/record")
				b.ReportMetric(1e9/per, "records/s")
				nsPerRecord[name] = per
			})
		}
	}
	ratio := func(a, d string) float64 { return nsPerRecord[a] / nsPerRecord[d] }
	b.Logf("batch of %d: per-record/pipelined = %.1fx without effect, %.1fx with totals; totals/plain cost = %.2fx pipelined, %.2fx per record",
		batchSize,
		ratio("effect=false/pipelined=false", "effect=false/pipelined=true"),
		ratio("effect=true/pipelined=false", "effect=true/pipelined=true"),
		ratio("effect=true/pipelined=true", "effect=false/pipelined=true"),
		ratio("effect=true/pipelined=false", "effect=false/pipelined=false"))
}
