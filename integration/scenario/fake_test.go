package scenario_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/pipeline"
)

// fakeSetup runs t once per group protocol with a fresh kfake broker and
// miniredis: fast, and no claim about the real servers (integration/ runs the
// same scenarios there).
func fakeSetup(t *testing.T, run func(t *testing.T, ctx context.Context, s scenario.Setup)) {
	for _, proto := range []pipeline.Protocol{pipeline.Classic, pipeline.Consumer} {
		t.Run(proto.String(), func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			run(t, ctx, scenario.Setup{Brokers: c.ListenAddrs(), Redis: miniredis.RunT(t).Addr(), Topic: "orders",
				Group: "g", Prefix: "ledger:", Protocol: proto})
		})
	}
}

func TestSeedParityFake(t *testing.T) {
	fakeSetup(t, func(t *testing.T, ctx context.Context, s scenario.Setup) {
		r, err := scenario.CrashBeforeCommit(ctx, s, scenario.CrashConfig{})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(r.Line())
		const want = "shard0=250 crash_attempts=37 checkpoint=30 replay=7 applied=1000 suppressed=7"
		if r.Line() != want {
			t.Fatalf("got  %s\nwant %s", r.Line(), want)
		}
		if err := r.ExactlyOnce(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRebalanceFake(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(map[bool]string{false: "graceful-leave", true: "crash-leave"}[crash], func(t *testing.T) {
			fakeSetup(t, func(t *testing.T, ctx context.Context, s scenario.Setup) {
				r, err := scenario.Rebalance(ctx, s, scenario.RebalanceConfig{Records: 3000, CrashLeave: crash})
				if err != nil {
					t.Fatal(err)
				}
				t.Log(r.Line())
				// Replays is counted from the ledger and the broker's
				// offsets, not from the pipelines: suppressed must match it.
				// The crashed consumer's held batch landed unreported, so
				// the pipelines' applied count falls short only then.
				f := r.Rebalance
				if (!crash && r.Applied != 3000) || f.LedgerKeys != 3000 || !f.TotalsOK ||
					r.Suppressed != f.Replays || f.OffsetDecreases != 0 || crash != (f.Replays > 0) || f.OffsetPolls < 1 {
					t.Fatalf("rebalance broke exactly-once: %s", r.Line())
				}
			})
		})
	}
}
