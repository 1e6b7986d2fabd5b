package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

type fakeEnv struct {
	brokers []string
	rc      redis.UniversalClient
	mr      *miniredis.Miniredis
}

func newFake(t *testing.T, topic string, partitions int32) fakeEnv {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	mr := miniredis.RunT(t)
	rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rc.Close() })
	return fakeEnv{brokers: c.ListenAddrs(), rc: rc, mr: mr}
}

func produce(t *testing.T, brokers []string, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestBadRecordPolicy: a record without a business key stops the pipeline
// (Stop) with its offset uncommitted, or is skipped and counted (Skip).
func TestBadRecordPolicy(t *testing.T) {
	for _, policy := range []pipeline.BadRecordPolicy{pipeline.Stop, pipeline.Skip} {
		t.Run(fmt.Sprint(policy), func(t *testing.T) {
			env := newFake(t, "orders", 1)
			var rs []*kgo.Record
			for i := range 10 {
				key := []byte(fmt.Sprintf("order-%d", i))
				if i == 4 {
					key = nil // no business key
				}
				rs = append(rs, &kgo.Record{Topic: "orders", Key: key, Value: []byte("{}")})
			}
			produce(t, env.brokers, rs...)
			ledger, err := sink.NewLedger(env.rc)
			if err != nil {
				t.Fatal(err)
			}
			log := watch.New()
			p, err := pipeline.New(pipeline.Brokers(env.brokers...), pipeline.Topics("orders"), pipeline.Group("g"),
				pipeline.Sink(ledger), pipeline.CommitEvery(2), pipeline.OnBadRecord(policy),
				pipeline.Logger(quiet()), pipeline.Observe(log.Observer("p")))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()
			part := checkpoint.Partition{Topic: "orders"}
			if policy == pipeline.Stop {
				err := <-done
				if !errors.Is(err, pipeline.ErrBadRecord) || !errors.Is(err, sink.ErrNoKey) {
					t.Fatalf("Run = %v, want ErrBadRecord wrapping ErrNoKey", err)
				}
				if c := watch.Committed(log.Events(), "")[part]; c != 4 {
					t.Fatalf("committed %d, want 4 (just before the bad record)", c)
				}
				return
			}
			if err := log.Wait(ctx, "commit to the end", func(evs []watch.Tagged) bool {
				return watch.Committed(evs, "")[part] == 10
			}); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			_, applied, _, rejected, _ := pipeline.Totals(p.Stats())
			if applied != 9 || rejected != 1 {
				t.Fatalf("applied=%d rejected=%d, want 9 and 1", applied, rejected)
			}
		})
	}
}
