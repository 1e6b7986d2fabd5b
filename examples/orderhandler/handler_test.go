package orderhandler_test

import (
	"testing"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/pipeline"

	"example.com/orderhandler"
)

// setup runs the Biller in pipelines configured as production would be.
func setup(t *testing.T, b *orderhandler.Biller, proto pipeline.Protocol) scenario.Setup {
	return scenario.Setup{
		Brokers:  integration.Kafka(t),
		Redis:    integration.Redis(t),
		Protocol: proto,
		Options:  []pipeline.GroupOpt{pipeline.CommitEvery(100), pipeline.MaxBatch(50)},
		Effect:   b.Charge,
	}
}

// requireChargedOnce checks the handler's own books against the report.
func requireChargedOnce(t *testing.T, b *orderhandler.Biller, r *scenario.Report) {
	t.Helper()
	charged := b.Charged()
	for _, k := range r.Keys {
		if charged[k] != 1 {
			t.Errorf("order %s charged %d times", k, charged[k])
		}
	}
}

// A member crashes out of the group while orders arrive: the orders it
// charged but never committed come again, and must not be charged again.
func TestBillerSurvivesRebalance(t *testing.T) {
	for _, proto := range []pipeline.Protocol{pipeline.Classic, pipeline.Consumer} {
		t.Run(proto.String(), func(t *testing.T) {
			b := orderhandler.NewBiller()
			r := integration.Rebalance(t.Context(), t, setup(t, b, proto),
				scenario.RebalanceConfig{Partitions: 6, Records: 3000, CrashLeave: true})
			integration.RequireExactlyOnce(t, r)
			requireChargedOnce(t, b, r)
			t.Logf("%s", r)
		})
	}
}

// An operator replays the second half of every partition to recover: the
// ledger suppresses every order, so nobody is charged twice.
func TestBillerSurvivesReplay(t *testing.T) {
	b := orderhandler.NewBiller()
	r := integration.Replay(t.Context(), t, setup(t, b, pipeline.Classic), scenario.ReplayConfig{From: 100})
	integration.RequireExactlyOnce(t, r)
	requireChargedOnce(t, b, r)
	if r.Replay.Replayed == 0 || r.Replay.Applied != 0 {
		t.Errorf("replay: %+v, want records replayed and none applied", r.Replay)
	}
}
