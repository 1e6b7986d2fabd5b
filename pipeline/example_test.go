package pipeline_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// Consume a topic into the Redis ledger, committing every 10 records. The
// example runs on franz-go's in-process broker and miniredis; in production
// give it real brokers and a real Redis.
func Example() {
	broker, _ := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	defer broker.Close()
	mr, _ := miniredis.Run()
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	producer, _ := kgo.NewClient(kgo.SeedBrokers(broker.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	for i := range 25 {
		id := fmt.Sprintf("order-%d", i%20) // five orders are sent twice
		producer.ProduceSync(ctx, &kgo.Record{Key: []byte(id), Value: []byte(`{}`)})
	}
	producer.Close()

	ledger, _ := sink.NewLedger(rdb, sink.WithPrefix("orders:"))
	committed := make(chan int64, 100)
	p, err := pipeline.New(
		pipeline.Brokers(broker.ListenAddrs()...),
		pipeline.Topics("orders"),
		pipeline.Group("billing"),
		pipeline.Sink(ledger),
		pipeline.CommitEvery(10),
		pipeline.Logger(slog.New(slog.DiscardHandler)),
		pipeline.Observe(func(e pipeline.Event) {
			if e.Kind == pipeline.Committed {
				select {
				case committed <- e.Offset:
				default:
				}
			}
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	go p.Run(ctx) //nolint:errcheck // Close reports the outcome
	for off := int64(0); off < 25; {
		select {
		case off = <-committed:
		case <-ctx.Done():
			fmt.Println("timed out")
			return
		}
	}
	if err := p.Close(ctx); err != nil {
		fmt.Println(err)
	}
	t := pipeline.Totals(p.Stats())
	fmt.Printf("applied=%d suppressed=%d\n", t.Applied, t.Suppressed)
	// Output: applied=20 suppressed=5
}

// Options are typed by the constructor that takes them: GroupOpt for New,
// ReplayOpt for NewReplay, Opt for both. A group-only option given to a
// replay (or a replay-only one given to a group) is a compile error, not a
// setting silently ignored:
//
//	pipeline.NewReplay("fix-1", "orders", ranges, rdb, pipeline.Group("billing"))
//	// cannot use pipeline.Group("billing") (value of interface type
//	// pipeline.GroupOpt) as pipeline.ReplayOpt value in argument to
//	// pipeline.NewReplay: pipeline.GroupOpt does not implement
//	// pipeline.ReplayOpt (missing method replayOpt)
//
// Settings shared by both are built once as []pipeline.Opt and passed to
// either as one value with pipeline.Options.
func ExampleNewReplay() {
	mr, _ := miniredis.Run()
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	ledger, _ := sink.NewLedger(rdb, sink.WithPrefix("orders:"))

	shared := []pipeline.Opt{pipeline.Brokers("127.0.0.1:9092"), pipeline.Sink(ledger), pipeline.CommitEvery(50)}
	p, err := pipeline.New(pipeline.Topics("orders"), pipeline.Group("billing"), pipeline.Options(shared...))
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Abort() // a real program calls p.Run
	ranges := []pipeline.Range{{Partition: 0, From: 100, To: 200}}
	r, err := pipeline.NewReplay("fix-1", "orders", ranges, rdb, pipeline.CheckpointPrefix("billing:replay:"), pipeline.Options(shared...))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Progress())
	// Output: []
}
