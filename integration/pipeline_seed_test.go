package integration

import (
	"context"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration/harness"
	"github.com/shardpipe/shardpipe/internal/scenario"
	"github.com/shardpipe/shardpipe/pipeline"
)

// eachProtocol runs fn as a parallel subtest per group protocol, with the real
// servers and names unique to the subtest, and a context bounded by limit.
func eachProtocol(t *testing.T, limit time.Duration, fn func(t *testing.T, ctx context.Context, env scenario.Env)) {
	t.Parallel()
	for _, proto := range []pipeline.Protocol{pipeline.Classic, pipeline.Consumer} {
		t.Run(proto.String(), func(t *testing.T) {
			t.Parallel()
			env := realEnv(t, proto)
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			fn(t, ctx, env)
		})
	}
}

// realEnv gives a scenario the real servers and names unique to t.
func realEnv(t *testing.T, proto pipeline.Protocol) scenario.Env {
	t.Helper()
	brokers, addr := harness.Kafka(t), harness.Redis(t)
	rdb := harness.NewRedisClient(t, addr)
	topic := harness.Topic(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = harness.NewAdmin(t, brokers).DeleteTopics(ctx, topic)
	})
	return scenario.Env{Brokers: brokers, Redis: rdb, Topic: topic, Group: harness.Group(t),
		Prefix: harness.RedisPrefix(t, rdb), Protocol: proto}
}

// TestSeedParity is the seed chapter's crash-and-resume test on the real
// broker and Redis: 4 partitions x 250 orders, commit every 10, partition 0's
// worker dies after 37 attempts between effect and commit, a fresh consumer
// resumes from the committed 30 and the ledger suppresses the 7 replays.
func TestSeedParity(t *testing.T) {
	eachProtocol(t, 3*time.Minute, func(t *testing.T, ctx context.Context, env scenario.Env) {
		proto := env.Protocol
		res, err := scenario.SeedParity(ctx, env)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s (real broker, %s protocol)", res.Line(), proto)
		const want = "shard0=250 crash_attempts=37 checkpoint=30 replay=7 applied=1000 suppressed=7"
		if res.Line() != want {
			t.Fatalf("got  %s\nwant %s", res.Line(), want)
		}
	})
}

// TestRebalance: two consumers share 8 partitions and 20,000 orders; a third
// joins mid-stream and one leaves, gracefully or as a crash (no final
// commit). Every order is applied exactly once (the ledger and the totals
// arithmetic agree), suppressed equals replays, and no committed offset ever
// decreased.
func TestRebalance(t *testing.T) {
	for _, crash := range []bool{false, true} {
		name := "graceful-leave"
		if crash {
			name = "crash-leave"
		}
		t.Run(name, func(t *testing.T) {
			eachProtocol(t, 5*time.Minute, func(t *testing.T, ctx context.Context, env scenario.Env) {
				res, err := scenario.Rebalance(ctx, env, scenario.RebalanceConfig{Partitions: 8, Orders: 20000, CrashLeave: crash})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s (real broker, %s protocol, %s)", res.Line(), env.Protocol, name)
				if res.Applied != 20000 || res.LedgerKeys != 20000 || !res.TotalsOK {
					t.Errorf("not exactly once: %s", res.Line())
				}
				if res.Suppressed != res.Replays {
					t.Errorf("suppressed %d != replays %d", res.Suppressed, res.Replays)
				}
				if res.Decreases != 0 {
					t.Errorf("committed offsets decreased %d times", res.Decreases)
				}
				if res.Assigned <= 8 {
					t.Errorf("only %d assignments: the join and the leave moved no partition", res.Assigned)
				}
			})
		})
	}
}
