package integration_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/scenario"
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
	broken := func(t *testing.T, opts ...pipeline.GroupOpt) scenario.Setup {
		return scenario.Setup{Brokers: integration.Kafka(t), Redis: integration.Redis(t), Options: opts,
			Sink: func(redis.UniversalClient, string) (pipeline.Applier, error) { return noLedger{}, nil }}
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) *scenario.Report
	}{
		{"crash", func(t *testing.T) *scenario.Report {
			return integration.CrashBeforeCommit(t.Context(), t, broken(t), scenario.CrashConfig{})
		}},
		{"rebalance", func(t *testing.T) *scenario.Report {
			// Rare commits, so the member that crashes out leaves landed
			// but uncommitted records for the others to replay.
			s := broken(t, pipeline.CommitEvery(1000), pipeline.CommitInterval(2*time.Second))
			return integration.Rebalance(t.Context(), t, s, scenario.RebalanceConfig{Records: 6000, CrashLeave: true})
		}},
		{"zombie", func(t *testing.T) *scenario.Report {
			return integration.Zombie(t.Context(), t, broken(t), scenario.ZombieConfig{})
		}},
		{"replay", func(t *testing.T) *scenario.Report {
			return integration.Replay(t.Context(), t, broken(t), scenario.ReplayConfig{From: 150})
		}},
		{"poison", func(t *testing.T) *scenario.Report {
			return integration.Poison(t.Context(), t, broken(t), scenario.PoisonConfig{})
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

// tamperer is a working Ledger that, once the key it watches has been
// applied, breaks that key's ledger entry behind the sink's back: the sink's
// answers still say every key applied once, only Redis says otherwise.
type tamperer struct {
	pipeline.Applier
	rdb     redis.UniversalClient
	prefix  string
	key     string
	breakIt func(ctx context.Context, rdb redis.UniversalClient, ledgerKey string, r sink.Record) error
}

func (a tamperer) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	res, err := a.Applier.Apply(ctx, batch)
	for i, r := range batch {
		if err == nil && string(r.Key) == a.key && res[i].Outcome == sink.Applied {
			if terr := a.breakIt(ctx, a.rdb, a.prefix+a.key, r); terr != nil {
				return nil, terr
			}
		}
	}
	return res, err
}

// TestLedgerCheckBites runs the crash scenario with a ledger entry broken
// after the sink applied it, on a partition nothing replays, and requires
// ExactlyOnce to fail on the ledger alone: the check reads Redis and the
// topic, not the sink's answers.
func TestLedgerCheckBites(t *testing.T) {
	t.Parallel()
	target := scenario.OrderKey(1, 5) // partition 1 is committed to its end before the crash's replay
	for _, tc := range []struct {
		name    string
		breakIt func(ctx context.Context, rdb redis.UniversalClient, key string, r sink.Record) error
		want    string
	}{
		{"deleted", func(ctx context.Context, rdb redis.UniversalClient, key string, _ sink.Record) error {
			return rdb.Del(ctx, key).Err()
		}, fmt.Sprintf("ledger has no key for %q", target)},
		{"names another record", func(ctx context.Context, rdb redis.UniversalClient, key string, r sink.Record) error {
			c := sink.Claim{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset + 1, Epoch: r.Epoch, Member: r.Member,
				At: time.Now(), State: sink.ClaimApplied}
			return rdb.Set(ctx, key, c.Encode(), 0).Err()
		}, fmt.Sprintf("ledger key %q names", target)},
		{"not a claim", func(ctx context.Context, rdb redis.UniversalClient, key string, _ sink.Record) error {
			return rdb.Set(ctx, key, "1", 0).Err()
		}, fmt.Sprintf("ledger key %q holds \"1\", not a claim", target)},
		{"pending", func(ctx context.Context, rdb redis.UniversalClient, key string, r sink.Record) error {
			c := sink.Claim{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Epoch: r.Epoch, Member: r.Member,
				At: time.Now(), State: sink.ClaimPending}
			return rdb.Set(ctx, key, c.Encode(), 0).Err()
		}, fmt.Sprintf("ledger key %q is pending", target)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := scenario.Setup{Brokers: integration.Kafka(t), Redis: integration.Redis(t),
				Sink: func(rdb redis.UniversalClient, prefix string) (pipeline.Applier, error) {
					l, err := sink.NewLedger(rdb, sink.WithPrefix(prefix))
					return tamperer{Applier: l, rdb: rdb, prefix: prefix, key: target, breakIt: tc.breakIt}, err
				}}
			r := integration.CrashBeforeCommit(t.Context(), t, s, scenario.CrashConfig{})
			err := r.ExactlyOnce()
			t.Logf("%s: %v", r, err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("with ledger key %q broken (%s), ExactlyOnce = %v; want %q", target, tc.name, err, tc.want)
			}
			if n := r.Applications[target]; n != 1 {
				t.Fatalf("the sink reported %q applied %d times; the test needs the ledger to be the only witness", target, n)
			}
			if strings.Contains(err.Error(), "applied ") {
				t.Fatalf("ExactlyOnce blamed the sink's answers, not the ledger: %v", err)
			}
		})
	}
}
