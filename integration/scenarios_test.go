package integration_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/pipeline"
)

// protocols runs fn as a parallel subtest per group protocol with a Setup on
// the real servers.
func protocols(t *testing.T, fn func(t *testing.T, s scenario.Setup)) {
	t.Parallel()
	for _, proto := range []pipeline.Protocol{pipeline.Classic, pipeline.Consumer} {
		t.Run(proto.String(), func(t *testing.T) {
			t.Parallel()
			fn(t, scenario.Setup{Brokers: integration.Kafka(t), Redis: integration.Redis(t), Protocol: proto})
		})
	}
}

// TestSeedParity is the seed chapter's crash-and-resume test on the real
// broker and Redis: 4 partitions x 250 orders, commit every 10, partition 0's
// worker dies after 37 attempts between effect and commit, a fresh consumer
// resumes from the committed 30 and the ledger suppresses the 7 replays.
func TestSeedParity(t *testing.T) {
	protocols(t, func(t *testing.T, s scenario.Setup) {
		r := integration.CrashBeforeCommit(t.Context(), t, s, scenario.CrashConfig{})
		line := r.Line()
		t.Logf("%s (real broker, %s protocol)", line, s.Protocol)
		const want = "shard0=250 crash_attempts=37 checkpoint=30 replay=7 applied=1000 suppressed=7"
		if line != want {
			t.Errorf("got  %s\nwant %s", line, want)
		}
		integration.RequireExactlyOnce(t, r)
	})
}

// TestRebalance: two consumers share 8 partitions and 20,000 orders; a third
// joins mid-stream and one leaves, gracefully or as a crash (no final
// commit). Every order is applied exactly once (the ledger read back from
// Redis and the totals arithmetic agree) and counted applied once in the
// members' stats, the pipelines suppressed exactly the records the leaving
// member had landed past the offsets it left committed on the broker, and
// no committed offset ever decreased.
func TestRebalance(t *testing.T) {
	for _, crash := range []bool{false, true} {
		name := "graceful-leave"
		if crash {
			name = "crash-leave"
		}
		t.Run(name, func(t *testing.T) {
			protocols(t, func(t *testing.T, s scenario.Setup) {
				r := integration.Rebalance(t.Context(), t, s, scenario.RebalanceConfig{CrashLeave: crash})
				f := r.Rebalance
				t.Logf("%s replays=%d assignments=%d decreases=%d offset_polls=%d totals_ok=%t (%s)", r, f.Replays, f.Assignments,
					f.OffsetDecreases, f.OffsetPolls, f.TotalsOK, name)
				integration.RequireExactlyOnce(t, r) // each order once, per the sink's answers and per the ledger in Redis
				if !f.TotalsOK {
					t.Error("the totals hash does not equal the sums over the orders")
				}
				if len(r.Ledger) != len(r.Keys) {
					t.Errorf("the ledger holds %d keys; want the %d orders", len(r.Ledger), len(r.Keys))
				}
				// Each key counted applied once over the members' stats, also
				// the crashed member's claims whose replies it never saw.
				if r.Applied != int64(len(r.Keys)) {
					t.Errorf("applied %d in the members' stats, want each of the %d keys once", r.Applied, len(r.Keys))
				}
				if r.Suppressed != f.Replays {
					t.Errorf("suppressed %d; the leaving member had landed %d records past its committed offsets",
						r.Suppressed, f.Replays)
				}
				if crash && f.Replays == 0 {
					t.Error("the crashed member left no landed, uncommitted record: the crash tested nothing")
				}
				if !crash && f.Replays != 0 {
					t.Errorf("graceful leave: %d landed records were left uncommitted", f.Replays)
				}
				if f.OffsetDecreases != 0 {
					t.Errorf("committed offsets decreased %d times", f.OffsetDecreases)
				}
				if f.Assignments <= 8 {
					t.Errorf("only %d assignments: the join and the leave moved no partition", f.Assignments)
				}
			})
		})
	}
}

// TestZombie: consumer A stalls while holding a batch on every partition; B
// joins and the partitions that move to B are revoked from A past A's revoke
// deadline, so A is fenced for them. B processes them to the end. A then wakes:
// its late effects are suppressed by the ledger and its commits are refused
// locally with ErrStaleEpoch and counted. A commit of a moved partition sent
// through shardpipe's own commit path (checkpoint.Kafka over A's client) with
// A's member ID and old epoch, past the local fence, is refused by the broker
// with exactly the code of the group's protocol, and B's committed offsets
// never move back.
func TestZombie(t *testing.T) {
	protocols(t, func(t *testing.T, s scenario.Setup) {
		r := integration.Zombie(t.Context(), t, s, scenario.ZombieConfig{})
		z := r.Zombie
		t.Logf("%s moved=%v zombie: attempts=%d applied=%d suppressed=%d fenced=%d broker=%v stale_epoch_retries=%+v",
			r, z.Moved, z.ZombieAttempts, z.ZombieApplied, z.ZombieSuppressed, z.ZombieFenced, z.BrokerRefusal,
			z.StaleEpochRetries)
		integration.RequireExactlyOnce(t, r)
		if z.ZombieAttempts == 0 || z.ZombieApplied != 0 || z.ZombieSuppressed != z.ZombieAttempts ||
			z.ZombieFenced < int64(len(z.Moved)) {
			t.Errorf("the zombie's late batch was not all suppressed and fenced: %+v", z)
		}
		for _, err := range z.Refusals {
			if !errors.Is(err, checkpoint.ErrStaleEpoch) {
				t.Errorf("refused commit: %v, want ErrStaleEpoch", err)
			}
		}
		var code *kerr.Error
		if !errors.As(z.BrokerRefusal, &code) {
			t.Fatalf("the stale commit through checkpoint.Kafka returned %v, want the broker's refusal", z.BrokerRefusal)
		}
		switch s.Protocol {
		case pipeline.Classic:
			// A is still a member, at a newer generation: the broker
			// answers ILLEGAL_GENERATION, which the store reports as fenced.
			if code != kerr.IllegalGeneration || !errors.Is(z.BrokerRefusal, checkpoint.ErrStaleEpoch) {
				t.Errorf("classic group: stale commit answered %v, want ILLEGAL_GENERATION wrapped in ErrStaleEpoch", z.BrokerRefusal)
			}
		case pipeline.Consumer:
			// The broker answers STALE_MEMBER_EPOCH; franz-go retries with
			// A's new epoch but drops the partition A no longer owns, and
			// answers REBALANCE_IN_PROGRESS for it itself.
			if code != kerr.RebalanceInProgress {
				t.Errorf("consumer group: stale commit answered %v, want franz-go's REBALANCE_IN_PROGRESS for a dropped partition", z.BrokerRefusal)
			}
			if len(z.StaleEpochRetries) != 1 || z.StaleEpochRetries[0].OldEpoch != z.Epoch || z.StaleEpochRetries[0].Dropped != 1 {
				t.Errorf("franz-go reported %+v; want one STALE_MEMBER_EPOCH answer to the commit at epoch %d, its one partition dropped",
					z.StaleEpochRetries, z.Epoch)
			}
		}
	})
}

// TestReplay: a topic processed to its end is replayed from offset 50 by a
// group whose offsets were moved back: every replayed effect is suppressed.
func TestReplay(t *testing.T) {
	protocols(t, func(t *testing.T, s scenario.Setup) {
		r := integration.Replay(t.Context(), t, s, scenario.ReplayConfig{From: 50})
		f := r.Replay
		t.Logf("%s replayed=%d replay_applied=%d replay_suppressed=%d", r, f.Replayed, f.Applied, f.Suppressed)
		integration.RequireExactlyOnce(t, r)
		if f.Replayed != 4*150 || f.Applied != 0 || f.Suppressed != f.Replayed {
			t.Errorf("replay: %+v, want 600 replayed, all suppressed", f)
		}
		for p, c := range f.Committed {
			if c != 200 {
				t.Errorf("replay group committed %d on %s, want 200", c, p)
			}
		}
	})
}

// TestPoison: poison records among orders are dead-lettered and committed
// past; a worker dies after dead-lettering some, uncommitted, and the
// resuming consumer does not write them again.
func TestPoison(t *testing.T) {
	protocols(t, func(t *testing.T, s scenario.Setup) {
		r := integration.Poison(t.Context(), t, s, scenario.PoisonConfig{})
		f := r.Poison
		t.Logf("%s poison=%d dlq_replays=%d", r, len(f.Poison), f.DeadLetterReplays)
		integration.RequireExactlyOnce(t, r)
		if len(f.Poison) != 40 || r.DeadLettered != 40 || f.DeadLetterReplays != 2 {
			t.Errorf("poison %d, dead-lettered %d, replays %d; want 40, 40 and 2 (offsets 9 and 19 of partition 0 "+
				"were dead-lettered before the crash at 25)", len(f.Poison), r.DeadLettered, f.DeadLetterReplays)
		}
	})
}

// The helpers below serve the process-level tests (zombie session, lost
// partitions), which drive pipelines themselves on a liveEnv.

// liveEnv is where a process-level test runs: the real servers, a Redis
// client, and names unique to the test.
type liveEnv struct {
	Brokers  []string
	Redis    redis.UniversalClient
	Topic    string // not created: the test creates it (integration.CreateNamedTopic)
	Group    string
	Prefix   string // ledger key prefix; keys deleted at cleanup
	Protocol pipeline.Protocol
}

// eachProtocol runs fn as a parallel subtest per group protocol, with the real
// servers and names unique to the subtest, and a context bounded by limit.
func eachProtocol(t *testing.T, limit time.Duration, fn func(t *testing.T, ctx context.Context, env liveEnv)) {
	t.Parallel()
	for _, proto := range []pipeline.Protocol{pipeline.Classic, pipeline.Consumer} {
		t.Run(proto.String(), func(t *testing.T) {
			t.Parallel()
			brokers, addr := integration.Kafka(t), integration.Redis(t)
			rdb := integration.NewRedisClient(t, addr)
			env := liveEnv{Brokers: brokers, Redis: rdb, Topic: integration.Topic(t), Group: integration.Group(t),
				Prefix: integration.RedisPrefix(t, rdb), Protocol: proto}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			fn(t, ctx, env)
		})
	}
}
