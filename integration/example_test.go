package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// payments is a sample order handler: it "charges" each order's amount. A
// charge made twice is the bug the scenarios hunt for.
type payments struct {
	mu      sync.Mutex
	charged map[string]int64 // order ID -> amount charged, summed
}

func (p *payments) charge(_ context.Context, key string, r *sink.Record) error {
	var o struct {
		AmountCents int64 `json:"amount_cents"`
	}
	if err := json.Unmarshal(r.Value, &o); err != nil {
		return fmt.Errorf("%w: order %s: %w", sink.ErrBadValue, key, err) // a bad record, not a retry
	}
	p.mu.Lock()
	p.charged[key] += o.AmountCents
	p.mu.Unlock()
	return nil
}

// TestExampleOrderHandler tests the sample handler with two scenarios: a
// crash between its charges and the offset commit, and a zombie member that
// wakes after its partitions moved. RequireExactlyOnce checks that every
// order was charged once.
func TestExampleOrderHandler(t *testing.T) {
	t.Parallel()
	setup := func(p *payments) scenario.Setup {
		return scenario.Setup{
			Brokers: integration.Kafka(t), Redis: integration.Redis(t),
			Options: []pipeline.GroupOpt{pipeline.CommitEvery(25)},
			Effect:  p.charge,
		}
	}
	t.Run("crash", func(t *testing.T) {
		p := &payments{charged: map[string]int64{}}
		r := integration.CrashBeforeCommit(t.Context(), t, setup(p), scenario.CrashConfig{CrashAfter: 60})
		integration.RequireExactlyOnce(t, r)
		t.Logf("%s; %d records came again after the crash at offset %d", r, r.Crash.Replayed, r.Crash.Checkpoint)
		if len(p.charged) != len(r.Keys) || r.Crash.Replayed == 0 {
			t.Errorf("charged %d orders of %d, replayed %d", len(p.charged), len(r.Keys), r.Crash.Replayed)
		}
	})
	t.Run("zombie", func(t *testing.T) {
		p := &payments{charged: map[string]int64{}}
		r := integration.Zombie(t.Context(), t, setup(p), scenario.ZombieConfig{})
		integration.RequireExactlyOnce(t, r)
		if r.Zombie.ZombieApplied != 0 {
			t.Errorf("the zombie charged %d orders after its partitions moved", r.Zombie.ZombieApplied)
		}
	})
}

// A test of your own handler needs a Setup naming the servers, your options
// and your effect; each scenario then returns a report to assert on.
func Example() {
	var t *testing.T // your test's t
	handler := func(ctx context.Context, key string, r *sink.Record) error {
		return nil // charge the order named key, passing key as the idempotency key
	}
	s := scenario.Setup{
		Brokers:  integration.Kafka(t),
		Redis:    integration.Redis(t),
		Protocol: pipeline.Consumer, // KIP-848
		Options:  []pipeline.GroupOpt{pipeline.CommitEvery(100)},
		Effect:   handler,
	}
	r := integration.Rebalance(t.Context(), t, s, scenario.RebalanceConfig{Records: 5000, CrashLeave: true})
	integration.RequireExactlyOnce(t, r)
}
