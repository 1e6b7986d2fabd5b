package integration_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// noLedger applies every record it is given: the ledger switched off, so
// nothing suppresses a replay. It breaks the guarantee on purpose.
type noLedger struct{}

func (noLedger) Apply(_ context.Context, batch []sink.Record) ([]sink.Result, error) {
	res := make([]sink.Result, len(batch))
	for i, r := range batch {
		res[i] = sink.Result{Key: string(r.Key), Outcome: sink.Applied}
	}
	return res, nil
}

// TestScenariosBite runs every scenario with the ledger switched off and
// requires ExactlyOnce to fail: with doubled keys, or, for poison records,
// with keyless records applied as if valid (and missing from the dead-letter
// topic). A scenario that passed without a ledger would prove nothing.
func TestScenariosBite(t *testing.T) {
	t.Parallel()
	broken := func(t *testing.T, opts ...pipeline.Option) integration.Setup {
		return integration.Setup{Brokers: integration.Kafka(t), Redis: integration.Redis(t), Options: opts,
			Sink: func(redis.UniversalClient, string) (pipeline.Applier, error) { return noLedger{}, nil }}
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) *integration.Report
	}{
		{"crash", func(t *testing.T) *integration.Report {
			return integration.CrashBeforeCommit(t.Context(), t, broken(t), integration.CrashConfig{})
		}},
		{"rebalance", func(t *testing.T) *integration.Report {
			// Rare commits, so the member that crashes out leaves landed
			// but uncommitted records for the others to replay.
			s := broken(t, pipeline.CommitEvery(1000), pipeline.CommitInterval(2*time.Second))
			return integration.Rebalance(t.Context(), t, s, integration.RebalanceConfig{Records: 6000, CrashLeave: true})
		}},
		{"zombie", func(t *testing.T) *integration.Report {
			return integration.Zombie(t.Context(), t, broken(t), integration.ZombieConfig{})
		}},
		{"replay", func(t *testing.T) *integration.Report {
			return integration.Replay(t.Context(), t, broken(t), integration.ReplayConfig{From: 150})
		}},
		{"poison", func(t *testing.T) *integration.Report {
			return integration.Poison(t.Context(), t, broken(t), integration.PoisonConfig{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.run(t)
			err := r.ExactlyOnce()
			t.Logf("%s: %v", r, err)
			want := " 2 times" // replays applied again
			if tc.name == "poison" {
				want = "but no such record was produced" // keyless poison applied as if valid
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("with the ledger off, ExactlyOnce = %v; want %q", err, want)
			}
		})
	}
}
