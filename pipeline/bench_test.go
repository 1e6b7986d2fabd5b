package pipeline_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// BenchmarkCommitEvery runs the same 4,000 records through the pipeline with
// commits every 1, 10, 100 and 1,000 records, side by side in one run, and
// reports each variant's time per record and its ratio to CommitEvery(1000).
// kfake and miniredis make the absolute numbers meaningless; the ratios show
// what a commit round trip costs relative to the ledger's batches.
func BenchmarkCommitEvery(b *testing.B) {
	const records = 4000
	variants := []int{1, 10, 100, 1000}
	total := make([]time.Duration, len(variants))
	for i := 0; i < b.N; i++ {
		for v, every := range variants {
			total[v] += runOnce(b, records, every)
		}
	}
	base := total[len(variants)-1]
	for v, every := range variants {
		b.ReportMetric(float64(total[v].Nanoseconds())/float64(b.N*records), fmt.Sprintf("ns/rec@every%d", every))
		b.ReportMetric(float64(total[v])/float64(base), fmt.Sprintf("x@every%d", every))
	}
}

func runOnce(b *testing.B, records, every int) time.Duration {
	b.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		b.Fatal(err)
	}
	defer mr.Close()
	rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rc.Close()
	ctx := context.Background()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		b.Fatal(err)
	}
	rs := make([]*kgo.Record, records)
	for i := range rs {
		rs[i] = &kgo.Record{Key: fmt.Appendf(nil, "order-%d", i), Value: []byte("{}")}
	}
	if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	prod.Close()
	ledger, err := sink.NewLedger(rc)
	if err != nil {
		b.Fatal(err)
	}
	committed := make(chan int64, 16)
	p, err := pipeline.New(pipeline.Brokers(c.ListenAddrs()...), pipeline.Topics("orders"), pipeline.Group("bench"),
		pipeline.Sink(ledger), pipeline.CommitEvery(every), pipeline.CommitInterval(0), pipeline.Logger(quiet()),
		pipeline.Observe(func(e pipeline.Event) {
			if e.Kind == pipeline.Committed && e.Offset == int64(records) {
				committed <- e.Offset
			}
		}))
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	go p.Run(ctx) //nolint:errcheck // Close reports it
	<-committed
	elapsed := time.Since(start)
	if err := p.Close(ctx); err != nil {
		b.Fatal(err)
	}
	return elapsed
}
