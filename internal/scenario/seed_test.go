package scenario

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/shardpipe/shardpipe/pipeline"
)

// TestSeedParityFake runs the seed's crash-and-resume scenario on kfake and
// miniredis: fast, and no claim about the real servers (integration/ runs the
// same scenario there).
func TestSeedParityFake(t *testing.T) {
	for _, proto := range []pipeline.Protocol{pipeline.Classic, pipeline.Consumer} {
		t.Run(proto.String(), func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			mr := miniredis.RunT(t)
			rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { _ = rc.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := SeedParity(ctx, Env{Brokers: c.ListenAddrs(), Redis: rc, Topic: "orders",
				Group: "seed", Prefix: "ledger:", Protocol: proto})
			if err != nil {
				t.Fatal(err)
			}
			t.Log(res.Line())
			want := "shard0=250 crash_attempts=37 checkpoint=30 replay=7 applied=1000 suppressed=7"
			if res.Line() != want {
				t.Fatalf("got  %s\nwant %s", res.Line(), want)
			}
		})
	}
}

// TestRebalanceFake runs the rebalance scenario small on kfake and miniredis.
func TestRebalanceFake(t *testing.T) {
	for _, proto := range []pipeline.Protocol{pipeline.Classic, pipeline.Consumer} {
		t.Run(proto.String(), func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			mr := miniredis.RunT(t)
			rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { _ = rc.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := Rebalance(ctx, Env{Brokers: c.ListenAddrs(), Redis: rc, Topic: "orders",
				Group: "rb", Prefix: "ledger:", Protocol: proto}, RebalanceConfig{Orders: 3000})
			if err != nil {
				t.Fatal(err)
			}
			t.Log(res.Line())
			if res.Applied != 3000 || res.LedgerKeys != 3000 || !res.TotalsOK || res.Suppressed != res.Replays || res.Decreases != 0 {
				t.Fatalf("rebalance broke exactly-once: %s", res.Line())
			}
		})
	}
}
