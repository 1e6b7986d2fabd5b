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

// fakeEnv runs t once per group protocol with a fresh kfake broker and
// miniredis: fast, and no claim about the real servers (integration/ runs the
// same scenarios there).
func fakeEnv(t *testing.T, run func(t *testing.T, ctx context.Context, env Env)) {
	for _, proto := range []pipeline.Protocol{pipeline.Classic, pipeline.Consumer} {
		t.Run(proto.String(), func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			rc := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
			t.Cleanup(func() { _ = rc.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			run(t, ctx, Env{Brokers: c.ListenAddrs(), Redis: rc, Topic: "orders", Group: "g",
				Prefix: "ledger:", Protocol: proto})
		})
	}
}

func TestSeedParityFake(t *testing.T) {
	fakeEnv(t, func(t *testing.T, ctx context.Context, env Env) {
		res, err := SeedParity(ctx, env)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res.Line())
		const want = "shard0=250 crash_attempts=37 checkpoint=30 replay=7 applied=1000 suppressed=7"
		if res.Line() != want {
			t.Fatalf("got  %s\nwant %s", res.Line(), want)
		}
	})
}

func TestRebalanceFake(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(map[bool]string{false: "graceful-leave", true: "crash-leave"}[crash], func(t *testing.T) {
			fakeEnv(t, func(t *testing.T, ctx context.Context, env Env) {
				res, err := Rebalance(ctx, env, RebalanceConfig{Orders: 3000, CrashLeave: crash})
				if err != nil {
					t.Fatal(err)
				}
				t.Log(res.Line())
				// Replays is counted from the ledger and the broker's
				// offsets, not from the pipelines: suppressed must match it.
				// The crashed consumer's held batch landed unreported, so
				// the pipelines' applied count falls short only then.
				if (!crash && res.Applied != 3000) || res.LedgerKeys != 3000 || !res.TotalsOK ||
					res.Suppressed != res.Replays || res.Decreases != 0 || crash != (res.Replays > 0) || res.OffsetPolls < 1 {
					t.Fatalf("rebalance broke exactly-once: %s", res.Line())
				}
			})
		})
	}
}
