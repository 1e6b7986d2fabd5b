package pipeline_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// A logging middleware around guard mode, built with Wrap: the wrapper
// logs each batch and keeps Guarded's Finisher (a term that ends with a
// batch of unknown outcome still marks done the effects that ran) and its
// Keyer (MaxInFlight orders keyless records by business key). A struct
// that only embedded pipeline.Applier would lose both.
func ExampleWrap() {
	mr, _ := miniredis.Run()
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	guard, _ := sink.NewGuard(rdb, sink.WithPrefix("payments:"))
	pay := func(_ context.Context, key string, _ *sink.Record) error {
		fmt.Println("pay", key) // the external effect, with key as its idempotency key
		return nil
	}

	logged := pipeline.Wrap(pipeline.Guarded(guard, pay),
		func(ctx context.Context, batch []sink.Record, next pipeline.ApplyFunc) ([]sink.Result, error) {
			fmt.Printf("batch of %d from offset %d\n", len(batch), batch[0].Offset)
			results, err := next(ctx, batch)
			fmt.Println("batch done, err:", err)
			return results, err
		})

	_, finisher := logged.(pipeline.Finisher)
	_, keyer := logged.(pipeline.Keyer)
	fmt.Println("finisher:", finisher, "keyer:", keyer)

	batch := []sink.Record{{Topic: "payments", Offset: 4, Key: []byte("pay-1"), Epoch: 1, Member: "m", Group: "billing"}}
	if _, err := logged.Apply(context.Background(), batch); err != nil {
		fmt.Println(err)
	}
	// In a pipeline: pipeline.New(..., pipeline.Sink(logged)).

	// Output:
	// finisher: true keyer: true
	// batch of 1 from offset 4
	// pay pay-1
	// batch done, err: <nil>
}
