package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// TestDeadLetterFencedMidDelivery: a worker fenced (as the revoke timeout
// does) while it delivers a dead letter gives up at once with errFenced and
// writes nothing, whether it was waiting out a foreign lease or scanning the
// dead-letter partition behind a lapsed one. Before, it waited the lease out
// and wrote the record as a zombie.
func TestDeadLetterFencedMidDelivery(t *testing.T) {
	for _, tc := range []struct {
		name string
		// until is the foreign marker's lease end, from now.
		until time.Duration
		// arm calls fence at the moment under test.
		arm func(c *kfake.Cluster, rc *redis.Client, fence func())
	}{
		{"waiting out a foreign lease", 10 * time.Second, func(_ *kfake.Cluster, rc *redis.Client, fence func()) {
			rc.AddHook(afterSet{key: "t:dlq:orders:0:4", fn: fence}) // the claim found the foreign marker
		}},
		{"scanning behind a lapsed lease", -time.Millisecond, func(c *kfake.Cluster, _ *redis.Client, fence func()) {
			c.ControlKey(kmsg.ListOffsets.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
				fence() // the scan asks for the dead-letter partition's offsets
				return nil, nil, false
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders", "orders.dlq"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			rc := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
			t.Cleanup(func() { _ = rc.Close() })
			now := time.Now().UTC()
			foreign := fmt.Sprintf(`{"state":"pending","owner":"other/1","at":%q,"until":%q}`,
				now.Add(-time.Second).Format(time.RFC3339Nano), now.Add(tc.until).Format(time.RFC3339Nano))
			if err := rc.Set(context.Background(), "t:dlq:orders:0:4", foreign, 0).Err(); err != nil {
				t.Fatal(err)
			}
			cfg, err := newConfig([]GroupOpt{Brokers(c.ListenAddrs()...), Topics("orders"), Group("g"),
				Sink(nopApplier{}), Logger(slog.New(slog.DiscardHandler)),
				DeadLetters(rc, "t:", DeadLetterLease(2*time.Second))}, true)
			if err != nil {
				t.Fatal(err)
			}
			r := newRunner(cfg, "g")
			if r.dlq, err = newDeadLetters(cfg); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.dlq.close)
			w := newWorker(&r, checkpoint.Partition{Topic: "orders"}, 1, "m")
			tc.arm(c, rc, w.fence)

			res := make(chan error, 1)
			go func() {
				_, err := w.deadLetter(&sink.Record{Topic: "orders", Offset: 4}, sink.ErrNoKey, 1)
				res <- err
			}()
			select {
			case err := <-res:
				if !errors.Is(err, errFenced) {
					t.Fatalf("deadLetter = %v, want errFenced", err)
				}
			case <-time.After(5 * time.Second): // far less than the foreign lease, far more than a fenced return takes
				t.Fatal("deadLetter still delivering 5s after its worker was fenced")
			}
			ends, err := kadm.NewClient(r.dlq.cl).ListEndOffsets(context.Background(), "orders.dlq")
			if err != nil {
				t.Fatal(err)
			}
			if end, _ := ends.Lookup("orders.dlq", 0); end.Offset != 0 {
				t.Fatalf("the fenced worker wrote %d dead letters, want none", end.Offset)
			}
		})
	}
}

// afterSet calls fn once a SET of key (a marker claim) has been answered.
type afterSet struct {
	key string
	fn  func()
}

func (afterSet) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h afterSet) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if args := cmd.Args(); cmd.Name() == "set" && len(args) > 1 && args[1] == h.key {
			h.fn()
		}
		return err
	}
}

func (afterSet) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestRevokeTimeoutEndsDeadLetter: a worker that misses the revoke timeout
// while it waits out a foreign dead-letter lease is fenced by onRevoked and
// ends at once, writing nothing; before, it went on waiting and then wrote
// the dead letter for a term that was over.
func TestRevokeTimeoutEndsDeadLetter(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders", "orders.dlq"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	defer func() { _ = rc.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	now := time.Now().UTC()
	foreign := fmt.Sprintf(`{"state":"pending","owner":"other/1","at":%q,"until":%q}`,
		now.Add(-time.Second).Format(time.RFC3339Nano), now.Add(15*time.Second).Format(time.RFC3339Nano))
	if err := rc.Set(ctx, "t:dlq:orders:0:0", foreign, 0).Err(); err != nil {
		t.Fatal(err)
	}
	claimed := make(chan struct{})
	var once sync.Once
	rc.AddHook(afterSet{key: "t:dlq:orders:0:0", fn: func() { once.Do(func() { close(claimed) }) }})
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	// no key: poison; the good record after it releases it to be
	// dead-lettered (a partition with no success holds its failures)
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("{}")}, &kgo.Record{Key: []byte("k"), Value: []byte("{}")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	prod.Close()
	ledger, err := sink.NewLedger(rc, sink.WithPrefix("t:"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Brokers(c.ListenAddrs()...), Topics("orders"), Group("g"), Sink(ledger), PoisonAttempts(1),
		RevokeTimeout(50*time.Millisecond), Logger(slog.New(slog.DiscardHandler)),
		DeadLetters(rc, "t:", DeadLetterLease(2*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-claimed: // the worker found the foreign claim and waits it out
	case <-ctx.Done():
		t.Fatal("the poison record's marker was never claimed")
	}
	part := checkpoint.Partition{Topic: "orders"}
	p.mu.Lock()
	w := p.workers[part]
	p.mu.Unlock()
	p.onRevoked(ctx, p.cl, map[string][]int32{"orders": {0}}) // returns once the timeout fenced w
	select {
	case <-w.done:
	case <-time.After(5 * time.Second): // far less than the foreign lease's 15s
		t.Fatal("the fenced worker still runs 5s after the revoke timeout")
	}
	if !w.fenced.Load() {
		t.Fatal("the worker was not fenced by the revoke timeout")
	}
	ends, err := kadm.NewClient(p.cl).ListEndOffsets(ctx, "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	if end, _ := ends.Lookup("orders.dlq", 0); end.Offset != 0 {
		t.Fatalf("the fenced worker wrote %d dead letters, want none", end.Offset)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
