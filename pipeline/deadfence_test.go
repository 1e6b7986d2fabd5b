package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
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
			rc.AddHook(afterSet{fence: fence}) // the claim found the foreign marker
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
			cfg, err := newConfig([]Option{Brokers(c.ListenAddrs()...), Topics("orders"), Group("g"),
				Sink(nopApplier{}), Logger(slog.New(slog.DiscardHandler)),
				DeadLetters(DeadLetterConfig{Redis: rc, Prefix: "t:", Lease: 2 * time.Second})}, true)
			if err != nil {
				t.Fatal(err)
			}
			r := newRunner(cfg)
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

// afterSet calls fence once a SET (a marker claim) has been answered.
type afterSet struct{ fence func() }

func (afterSet) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h afterSet) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() == "set" {
			h.fence()
		}
		return err
	}
}

func (afterSet) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
