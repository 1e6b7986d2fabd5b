package scenario_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestSetupRefused: a Setup that cannot run is refused with an error naming
// the problem by every scenario, before anything is created; so is a
// replay range outside the partitions.
func TestSetupRefused(t *testing.T) {
	effect := func(context.Context, string, *sink.Record) error { return nil }
	applier := func(redis.UniversalClient, string) (pipeline.Applier, error) { return nil, nil }
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		s    scenario.Setup
		want string
	}{
		{"no brokers", scenario.Setup{Redis: "127.0.0.1:1"}, "Setup needs Brokers and Redis"},
		{"no redis", scenario.Setup{Brokers: []string{"127.0.0.1:1"}}, "Setup needs Brokers and Redis"},
		{"effect and sink", scenario.Setup{Brokers: []string{"127.0.0.1:1"}, Redis: "127.0.0.1:1", Effect: effect, Sink: applier},
			"Setup takes Effect or Sink, not both"},
	} {
		for name, run := range map[string]func() (*scenario.Report, error){
			"crash":     func() (*scenario.Report, error) { return scenario.CrashBeforeCommit(ctx, tc.s, scenario.CrashConfig{}) },
			"rebalance": func() (*scenario.Report, error) { return scenario.Rebalance(ctx, tc.s, scenario.RebalanceConfig{}) },
			"zombie":    func() (*scenario.Report, error) { return scenario.Zombie(ctx, tc.s, scenario.ZombieConfig{}) },
			"replay":    func() (*scenario.Report, error) { return scenario.Replay(ctx, tc.s, scenario.ReplayConfig{}) },
			"poison":    func() (*scenario.Report, error) { return scenario.Poison(ctx, tc.s, scenario.PoisonConfig{}) },
		} {
			if r, err := run(); r != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, %s: %v, %v; want %q", tc.name, name, r, err, tc.want)
			}
		}
	}
	s := scenario.Setup{Brokers: []string{"127.0.0.1:1"}, Redis: "127.0.0.1:1"}
	if _, err := scenario.Replay(ctx, s, scenario.ReplayConfig{PerPartition: 10, From: 11}); err == nil ||
		!strings.Contains(err.Error(), "replay from offset 11: want 0..10") {
		t.Errorf("Replay from past the end: %v", err)
	}
}
