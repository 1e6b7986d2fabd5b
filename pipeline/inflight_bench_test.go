package pipeline_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// BenchmarkGuardInFlight runs guard mode with an HTTP effect (a POST per
// record to a local receiver that answers after a delay) side by side in
// one run: batches one after another against a 20ms receiver (sequential),
// MaxInFlight 64 against the same receiver, and MaxInFlight 64 against a
// 0ms receiver (where the machine, not the latency, bounds the rate). It
// reports each variant's records per second and the ratios the issue
// targets: x64/seq (want at least 20) and x64/0ms (want at least 0.5).
// One partition on kfake; Redis is REDIS_ADDR when set (else miniredis,
// whose one-at-a-time Lua then bounds every variant). The ratios, not the
// absolute rates, are the result.
func BenchmarkGuardInFlight(b *testing.B) {
	variants := []struct {
		name    string
		delay   time.Duration
		records int
		opts    []pipeline.GroupOpt
	}{
		{"seq@20ms", 20 * time.Millisecond, 100, nil},
		{"if64@20ms", 20 * time.Millisecond, 2000, []pipeline.GroupOpt{pipeline.MaxInFlight(64)}},
		{"if64@0ms", 0, 2000, []pipeline.GroupOpt{pipeline.MaxInFlight(64)}},
	}
	rps := make([]float64, len(variants))
	for i := 0; i < b.N; i++ {
		for v, vr := range variants {
			d := guardRun(b, vr.records, vr.delay, vr.opts...)
			rps[v] += float64(vr.records) / d.Seconds()
		}
	}
	for v, vr := range variants {
		rps[v] /= float64(b.N)
		b.ReportMetric(rps[v], "rec/s@"+vr.name)
	}
	b.ReportMetric(rps[1]/rps[0], "x64/seq")
	b.ReportMetric(rps[1]/rps[2], "x64/0ms")
}

// guardRun times records through guard mode with an HTTP effect whose
// receiver answers after delay, until the partition is committed to its end.
func guardRun(b *testing.B, records int, delay time.Duration, opts ...pipeline.GroupOpt) time.Duration {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if delay > 0 {
			time.Sleep(delay) // the receiver's latency
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 128
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	effect := func(ctx context.Context, key string, r *sink.Record) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader(r.Value))
		if err != nil {
			return err
		}
		req.Header.Set("Idempotency-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	// miniredis runs the guard's Lua scripts one at a time, slowly: with
	// REDIS_ADDR set the bench uses that Redis (keys under a fresh prefix,
	// expiring in a minute), so Redis is not what bounds the 0ms variant.
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		mr := miniredis.NewMiniRedis()
		if err := mr.Start(); err != nil {
			b.Fatal(err)
		}
		defer mr.Close()
		addr = mr.Addr()
	}
	rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 128})
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
	g, err := sink.NewGuard(rc, sink.WithPrefix("bench:"+rand.Text()+":"), sink.WithTTL(time.Minute), sink.WithLogger(quiet()))
	if err != nil {
		b.Fatal(err)
	}
	committed := make(chan struct{}, 1)
	p, err := pipeline.New(append([]pipeline.GroupOpt{pipeline.Brokers(c.ListenAddrs()...), pipeline.Topics("orders"),
		pipeline.Group("bench"), pipeline.Sink(pipeline.Guarded(g, effect)), pipeline.CommitInterval(50 * time.Millisecond),
		pipeline.Logger(quiet()), pipeline.Observe(func(e pipeline.Event) {
			if e.Kind == pipeline.Committed && e.Offset == int64(records) {
				committed <- struct{}{}
			}
		})}, opts...)...)
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
