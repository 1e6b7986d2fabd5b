package scenario_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/alicebob/miniredis/v2"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/sink"
)

// The seed chapter's crash between effect and commit, run outside a test
// with an effect of one's own. Here the servers are in-process stand-ins
// (kfake and miniredis); give real ones to learn about Kafka and Redis.
func ExampleCrashBeforeCommit() {
	kafka, _ := kfake.NewCluster(kfake.NumBrokers(1))
	defer kafka.Close()
	redis, _ := miniredis.Run()
	defer redis.Close()

	var mu sync.Mutex           // partitions' workers run the effect at once
	charged := map[string]int{} // order ID -> charges
	charge := func(_ context.Context, key string, _ *sink.Record) error {
		mu.Lock()
		defer mu.Unlock()
		charged[key]++ // in production: charge, passing key as the idempotency key
		return nil
	}
	r, err := scenario.CrashBeforeCommit(context.Background(), scenario.Setup{
		Brokers: kafka.ListenAddrs(), Redis: redis.Addr(), Effect: charge,
	}, scenario.CrashConfig{})
	if err != nil {
		fmt.Println("the scenario could not run:", err)
		return
	}
	fmt.Println(r.Line())
	fmt.Println("exactly once:", r.ExactlyOnce() == nil, "orders charged:", len(charged))
	// Output:
	// shard0=250 crash_attempts=37 checkpoint=30 replay=7 applied=1000 suppressed=7
	// exactly once: true orders charged: 1000
}
