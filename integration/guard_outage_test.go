package integration_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// failingApplier counts the Apply calls that failed and signals each one.
type failingApplier struct {
	pipeline.Applier
	failed atomic.Int32
	signal chan struct{}
}

func (a *failingApplier) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	res, err := a.Applier.Apply(ctx, b)
	if batchErr(res, err) != nil {
		a.failed.Add(1)
		select {
		case a.signal <- struct{}{}:
		default:
		}
	}
	return res, err
}

func (a *failingApplier) Finish(ctx context.Context, b []sink.Record) (int, int, error) {
	return forwardFinish(ctx, a.Applier, b)
}

// TestGuardRedisOutageAfterEffect runs guard mode through the pipeline on the
// real broker with a private redis-server (AOF, fsync always) that is
// SIGKILLed right after an external effect ran, before its claim is marked
// done. The done write fails past the sink's retries (ErrUnknown), the
// pipeline applies the batch again and again, and redis-server comes back on
// the same port only after the pipeline counted failed batches: with the
// outage shorter than the lease (the pending claim is still there) and
// longer (it lapsed). No process crashed, so every external effect must run
// exactly once: the retry only marks the claim done.
func TestGuardRedisOutageAfterEffect(t *testing.T) {
	brokers := integration.Kafka(t)
	for _, tc := range []struct {
		name         string
		lease        time.Duration
		outageLonger bool // keep Redis down until the lease has lapsed
	}{
		{"outage shorter than the lease", 20 * time.Second, false},
		{"outage longer than the lease", 1500 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := itest.StartPrivateRedis(t)
			topic := integration.CreateTopic(t, brokers, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			const n = 5
			prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
			for i := range n {
				if err := prod.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "pay-%d", i), Value: []byte("{}")}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			rdb := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
			defer rdb.Close()
			g, err := sink.NewGuard(rdb, sink.WithPrefix("g:"), sink.WithLease(tc.lease),
				sink.WithRetry(sink.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond, Attempts: 3}))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			runs := map[string]int{}
			var killedAt time.Time
			effect := func(_ context.Context, key string, _ *sink.Record) error {
				mu.Lock()
				runs[key]++
				first := key == "pay-2" && killedAt.IsZero()
				if first {
					killedAt = time.Now()
				}
				mu.Unlock()
				if first {
					rs.Kill() // the call went out; Redis dies before done is written
				}
				return nil
			}
			app := &failingApplier{Applier: pipeline.Guarded(g, effect), signal: make(chan struct{}, 1)}
			log := watch.New()
			p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(integration.Group(t)),
				pipeline.Sink(app), pipeline.CommitEvery(1), pipeline.MaxBatch(n), pipeline.Observe(log.Observer("p")))
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()

			// Heal only after the pipeline's retries have failed (and, for
			// the longer outage, once the lease has certainly lapsed).
			for app.failed.Load() < 3 || (tc.outageLonger && time.Since(killedAt) < tc.lease+500*time.Millisecond) {
				select {
				case <-app.signal:
				case <-ctx.Done():
					t.Fatalf("the pipeline failed %d batches, want 3 before Redis comes back", app.failed.Load())
				}
			}
			t.Logf("redis down for %v; %d failed batch attempts", time.Since(killedAt).Round(time.Millisecond), app.failed.Load())
			rs.Start(t)
			part := checkpoint.Partition{Topic: topic}
			if err := log.Wait(ctx, "every payment committed", func(evs []watch.Tagged) bool {
				return watch.Committed(evs, "")[part] == n
			}); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for i := range n {
				key := fmt.Sprintf("pay-%d", i)
				if runs[key] != 1 {
					t.Errorf("external effect for %s ran %d times, want exactly 1", key, runs[key])
				}
				cl, ok, err := g.Lookup(ctx, key)
				if err != nil || !ok || cl.State != sink.ClaimDone {
					t.Errorf("claim of %s: %+v, %v, %v; want done", key, cl, ok, err)
				}
			}
		})
	}
}

// pollCounter is a go-redis hook that counts script calls (a Guard's claim
// attempts and polls) and signals each one.
type pollCounter struct {
	n      atomic.Int32
	signal chan struct{}
}

func (h *pollCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *pollCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *pollCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			h.n.Add(1)
			select {
			case h.signal <- struct{}{}:
			default:
			}
		}
		return err
	}
}

// TestSinkGuardLeaseRenewedRealRedis: an effect that runs three leases long,
// past its own context, keeps its claim: the lease is renewed while it runs,
// so another owner polling the key all that time never claims it nor runs
// the effect, and is suppressed once the first owner marks it done.
func TestSinkGuardLeaseRenewedRealRedis(t *testing.T) {
	t.Parallel()
	addr := integration.Redis(t)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	ctx := context.Background()
	const lease = 600 * time.Millisecond
	retry := sink.WithRetry(sink.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond, Attempts: 5})
	a, err := sink.NewGuard(rdb, sink.WithPrefix(prefix), sink.WithLease(lease), retry)
	if err != nil {
		t.Fatal(err)
	}
	other := integration.NewRedisClient(t, addr)
	polls := &pollCounter{signal: make(chan struct{}, 1)}
	other.AddHook(polls)
	b, err := sink.NewGuard(other, sink.WithPrefix(prefix), sink.WithLease(lease), retry)
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	started, bDone := make(chan struct{}), make(chan struct{})
	var effectCtxErr error
	slow := func(ectx context.Context, _ string) error {
		runs.Add(1)
		claimed := time.Now()
		close(started)
		// Run on, ignoring the context, until the other owner has polled
		// through three leases (or, the defect, returned).
		for polls.n.Load() < 10 || time.Since(claimed) < 3*lease {
			select {
			case <-polls.signal:
			case <-bDone:
				return nil
			}
		}
		effectCtxErr = ectx.Err()
		return nil
	}
	first := sinkOrder(0, 1, 1, "o1", "a", 1)
	aDone := make(chan error, 1)
	go func() {
		out, err := a.Do(ctx, &first, slow)
		if err == nil && out != sink.Applied {
			err = errors.New("first owner: " + out.String())
		}
		aDone <- err
	}()
	<-started
	resend := sinkOrder(0, 2, 1, "o1", "a", 1)
	out, err := b.Do(ctx, &resend, func(context.Context, string) error { runs.Add(1); return nil })
	close(bDone)
	if err != nil || out != sink.Suppressed {
		t.Errorf("other owner = %v, %v; want suppressed", out, err)
	}
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 {
		t.Errorf("effect ran %d times, want 1", runs.Load())
	}
	if effectCtxErr == nil {
		t.Error("the effect's context did not end within three leases")
	}
	t.Logf("other owner polled %d times while the effect ran", polls.n.Load())
}

// batchErr is a batch's failure: Apply's error, or the first record's
// error in its results (Guarded reports a record whose outcome is unknown
// there, with the records before it landed).
func batchErr(res []sink.Result, err error) error {
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}
