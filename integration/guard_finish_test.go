package integration_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// finisher is pipeline.Finisher, named here so that the test wrappers
// forward it (and build on code without it).
type finisher interface {
	Finish(ctx context.Context, batch []sink.Record) (finished, left int, err error)
}

// forwardFinish calls a's Finish, if it has one.
func forwardFinish(ctx context.Context, a pipeline.Applier, b []sink.Record) (int, int, error) {
	if f, ok := a.(finisher); ok {
		return f.Finish(ctx, b)
	}
	return 0, 0, nil
}

// stallAfterFailure passes batches through until one fails (its outcome is
// unknown), then, as a Redis call hanging through an outage would, holds
// every retry until the worker's context ends (the partition lost) and
// fails it without reaching the sink. It forwards Finish.
type stallAfterFailure struct {
	pipeline.Applier
	failedOnce atomic.Bool
	failed     chan struct{} // closed at the first failure
	endedOnce  sync.Once
	ended      chan struct{} // closed when a held retry's context ended
}

func newStallAfterFailure(a pipeline.Applier) *stallAfterFailure {
	return &stallAfterFailure{Applier: a, failed: make(chan struct{}), ended: make(chan struct{})}
}

func (s *stallAfterFailure) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	if s.failedOnce.Load() {
		<-ctx.Done()
		s.endedOnce.Do(func() { close(s.ended) })
		return nil, ctx.Err()
	}
	res, err := s.Applier.Apply(ctx, b)
	if batchErr(res, err) != nil && s.failedOnce.CompareAndSwap(false, true) {
		close(s.failed)
	}
	return res, err
}

func (s *stallAfterFailure) Finish(ctx context.Context, b []sink.Record) (int, int, error) {
	return forwardFinish(ctx, s.Applier, b)
}

// effectRuns is the external system of a guard test: it counts the runs of
// each key's effect, and kills Redis right after the first run of one key
// (the call went out; the done write will meet the outage).
type effectRuns struct {
	mu     sync.Mutex
	runs   map[string]int
	killAt string
	kill   func()
}

func (e *effectRuns) effect(_ context.Context, key string, _ *sink.Record) error {
	e.mu.Lock()
	e.runs[key]++
	kill := key == e.killAt && e.runs[key] == 1
	e.mu.Unlock()
	if kill {
		e.kill()
	}
	return nil
}

func (e *effectRuns) check(t *testing.T, keys ...string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range keys {
		if e.runs[k] != 1 {
			t.Errorf("external effect for %s ran %d times, want exactly 1", k, e.runs[k])
		}
	}
}

// guardFinishSetup is a topic holding pay-0..2 and a private redis-server.
type guardFinishSetup struct {
	brokers []string
	topic   string
	group   string
	rs      *itest.PrivateRedis
	ext     *effectRuns
}

func newGuardFinishSetup(t *testing.T, ctx context.Context) *guardFinishSetup {
	t.Helper()
	s := &guardFinishSetup{brokers: integration.Kafka(t), rs: itest.StartPrivateRedis(t), group: integration.Group(t)}
	s.topic = integration.CreateTopic(t, s.brokers, 1)
	s.ext = &effectRuns{runs: map[string]int{}, killAt: "pay-1", kill: s.rs.Kill}
	prod := integration.NewKafkaClient(t, s.brokers, kgo.DefaultProduceTopic(s.topic))
	var recs []*kgo.Record
	for i := range 3 {
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "pay-%d", i), Value: []byte("{}")})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return s
}

// guard returns a Guard on the private Redis, with a client of its own.
func (s *guardFinishSetup) guard(t *testing.T, lease time.Duration) *sink.Guard {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: s.rs.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	g, err := sink.NewGuard(rdb, sink.WithPrefix("g:"), sink.WithLease(lease),
		sink.WithRetry(sink.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond, Attempts: 3}))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// options are the pipeline options of every consumer of the setup: the
// whole topic is one batch, committed at once.
func (s *guardFinishSetup) options(a pipeline.Applier, obs func(pipeline.Event), more ...pipeline.GroupOpt) []pipeline.GroupOpt {
	return append([]pipeline.GroupOpt{pipeline.Brokers(s.brokers...), pipeline.Topics(s.topic), pipeline.Group(s.group),
		pipeline.Sink(a), pipeline.CommitEvery(3), pipeline.MaxBatch(3), pipeline.Observe(obs),
		pipeline.Logger(slog.New(slog.DiscardHandler))}, more...)
}

// nextOwner runs a consumer on a fresh Guard after the first one's term
// ended, until it committed the whole topic, and checks that the batch's
// records whose effects ran are redelivered, not run again: only pay-2
// (never attempted) is claimed.
func (s *guardFinishSetup) nextOwner(t *testing.T, ctx context.Context, lease time.Duration, log *watch.Log) {
	t.Helper()
	p, err := pipeline.New(s.options(pipeline.Guarded(s.guard(t, lease), s.ext.effect), log.Observer("next"))...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	if err := log.Wait(ctx, "the next owner to commit the topic", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "next")[checkpoint.Partition{Topic: s.topic}] == 3
	}); err != nil {
		t.Error(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.ext.check(t, "pay-0", "pay-1", "pay-2")
	// pay-0 landed before pay-1's done write failed, and the stop's final
	// commit moved past it (batches land their known prefix): the next
	// owner starts at pay-1.
	if st := p.Stats(); len(st) != 1 || st[0].Claimed != 1 || st[0].Redelivered != 1 || st[0].Start != 1 {
		t.Errorf("next owner's stats %+v, want it to start at pay-1, redelivered, and claim pay-2", st)
	}
}

// checkDone checks that key's claim is done and names the ended term.
func checkDone(t *testing.T, ctx context.Context, g *sink.Guard, key, member string) {
	t.Helper()
	cl, ok, err := g.Lookup(ctx, key)
	if err != nil || !ok || cl.State != sink.ClaimDone || cl.Member != member {
		t.Errorf("claim of %s once the term ended: %+v, %v, %v; want done by member %s", key, cl, ok, err, member)
	}
}

// TestGuardZombieFinishesUnknownBatch is the chaos run's double effect
// without a crash, on the real broker and a private redis-server (AOF,
// fsync always). Consumer Z runs pay-1's external effect, and Redis is
// SIGKILLed before the done write, which fails past the sink's retries:
// the batch's outcome is unknown, and Z's retry hangs on the outage. Then
// Z's connections to the broker are held (a frozen host) until its session
// expires, and B is given the partition. When Z's connections come back,
// Z learns it lost the partition, its retry ends with its context, and
// Redis comes back only then: no retry of the batch comes in Z's term. Z
// must still mark pay-1 done (within its revoke timeout) before it lets
// the partition go, and B must then redeliver pay-0 and pay-1 without
// running them: every effect runs exactly once.
func TestGuardZombieFinishesUnknownBatch(t *testing.T) {
	for _, proto := range []pipeline.Protocol{pipeline.Classic, pipeline.Consumer} {
		t.Run(proto.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s := newGuardFinishSetup(t, ctx)
			const lease = 20 * time.Second
			log := watch.New()
			gz := s.guard(t, lease)
			app := newStallAfterFailure(pipeline.Guarded(gz, s.ext.effect))
			w := newWire()
			z, err := pipeline.New(s.options(app, log.Observer("Z"), pipeline.GroupProtocol(proto),
				pipeline.SessionTimeout(2*time.Second), pipeline.RevokeTimeout(30*time.Second),
				pipeline.KafkaOptions(kgo.Dialer(w.dial), kgo.RequestTimeoutOverhead(2*time.Minute),
					kgo.HeartbeatInterval(300*time.Millisecond)))...)
			if err != nil {
				t.Fatal(err)
			}
			zDone := make(chan error, 1)
			go func() { zDone <- z.Run(ctx) }()
			t.Cleanup(z.Abort)
			select {
			case <-app.failed:
			case <-ctx.Done():
				t.Fatal("Z's done write never failed")
			}
			zMember, _ := z.Client().GroupMetadata()
			w.hold()

			// B joins and is given the partition once Z's session expired;
			// it holds its first batch until Z is gone.
			bGate := newGate(0)
			b, err := pipeline.New(s.options(pipeline.Guarded(s.guard(t, lease), s.ext.effect), log.Observer("B"),
				pipeline.GroupProtocol(proto))...)
			if err != nil {
				t.Fatal(err)
			}
			bDone := make(chan error, 1)
			go func() { bDone <- b.Run(faults.WithWorker(ctx, faults.Worker{BeforeApply: bGate.hook})) }()
			t.Cleanup(b.Abort)
			bGate.await(ctx, t, 1, "B to be given the partition")

			// Z wakes and learns it lost the partition; Redis comes back after.
			if err := w.release(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-app.ended:
			case <-ctx.Done():
				t.Fatal("Z's retry never ended: it did not learn it lost the partition")
			}
			s.rs.Start(t)
			part := checkpoint.Partition{Topic: s.topic}
			if err := log.Wait(ctx, "Z to let the partition go", func(evs []watch.Tagged) bool {
				return watch.Has(evs, "Z", pipeline.Lost, part) || watch.Has(evs, "Z", pipeline.Revoked, part)
			}); err != nil {
				t.Fatal(err)
			}
			checkDone(t, ctx, gz, "pay-1", zMember)

			close(bGate.open)
			if err := log.Wait(ctx, "B to commit the topic", func(evs []watch.Tagged) bool {
				return watch.Committed(evs, "B")[part] == 3
			}); err != nil {
				t.Fatal(err)
			}
			s.ext.check(t, "pay-0", "pay-1", "pay-2")
			if st := b.Stats(); len(st) != 1 || st[0].Claimed != 1 || st[0].Redelivered != 2 {
				t.Errorf("B's stats %+v, want pay-2 claimed and pay-0, pay-1 redelivered", st)
			}
			for name, p := range map[string]*pipeline.Pipeline{"B": b, "Z": z} {
				if err := p.Close(ctx); err != nil {
					t.Errorf("closing %s: %v", name, err)
				}
			}
			for name, done := range map[string]chan error{"B": bDone, "Z": zDone} {
				if err := <-done; err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
	}
}

// logSignal is a slog.Handler that closes seen at the first record with
// message msg; it keeps nothing else.
type logSignal struct {
	msg  string
	once *sync.Once
	seen chan struct{}
}

func newLogSignal(msg string) logSignal {
	return logSignal{msg: msg, once: &sync.Once{}, seen: make(chan struct{})}
}

func (l logSignal) Enabled(context.Context, slog.Level) bool { return true }
func (l logSignal) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l logSignal) WithGroup(string) slog.Handler            { return l }
func (l logSignal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == l.msg {
		l.once.Do(func() { close(l.seen) })
	}
	return nil
}

// TestGuardStopFinishesUnknownBatch: a consumer runs pay-1's external
// effect and Redis is SIGKILLed before the done write, which fails past the
// sink's retries; while Redis is down the consumer is asked to stop (Close,
// or Run's context ending as on SIGTERM). It gives up retrying the batch
// and logs what it leaves for replay; Redis comes back within the shutdown
// timeout. The consumer must commit pay-0 (landed before the failure) and
// mark pay-1 done before it exits, and the next owner must redeliver pay-1
// without running it.
func TestGuardStopFinishesUnknownBatch(t *testing.T) {
	for _, how := range []string{"Close", "Run's context ended"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s := newGuardFinishSetup(t, ctx)
			const lease = 20 * time.Second
			log := watch.New()
			g := s.guard(t, lease)
			app := &failingApplier{Applier: pipeline.Guarded(g, s.ext.effect), signal: make(chan struct{}, 1)}
			left := newLogSignal("stopped with records left for replay")
			opts := s.options(app, log.Observer("p"), pipeline.ShutdownTimeout(30*time.Second))
			p, err := pipeline.New(append(opts, pipeline.Logger(slog.New(left)))...)
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stopRun := context.WithCancel(ctx)
			defer stopRun()
			done := make(chan error, 1)
			go func() { done <- p.Run(runCtx) }()
			t.Cleanup(p.Abort)
			select {
			case <-app.signal:
			case <-ctx.Done():
				t.Fatal("the done write never failed")
			}
			member, _ := p.Client().GroupMetadata()
			stopped := make(chan error, 1)
			go func() {
				if how == "Close" {
					stopped <- p.Close(ctx)
					return
				}
				stopRun()
				stopped <- nil
			}()
			select {
			case <-left.seen: // the worker gave the batch up
			case <-ctx.Done():
				t.Fatal("the consumer never gave up the batch")
			}
			s.rs.Start(t)
			if err := <-stopped; err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			checkDone(t, ctx, g, "pay-1", member)
			s.nextOwner(t, ctx, lease, log)
		})
	}
}

// outage is a go-redis hook that fails every command while down is set, as
// a Redis that cannot be reached would (a network error, which the sink
// retries and then reports as ErrUnknown).
type outage struct{ down atomic.Bool }

var errUnreachable = errors.New("injected: dial tcp: connection refused")

func (o *outage) DialHook(next redis.DialHook) redis.DialHook { return next }
func (o *outage) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if o.down.Load() {
			cmd.SetErr(errUnreachable)
			return errUnreachable
		}
		return next(ctx, cmd)
	}
}
func (o *outage) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestGuardFinishNeverOverwritesAnotherOwner, on the real Redis: consumer
// A runs a record's external effect and its done write fails (A's Redis
// connection is cut after the effect); A's pending claim lapses, and the
// record's next owner B (the same record under a new term) claims the key
// and runs the effect: the documented window. When A's term then ends and
// it finishes its unknown batch (pipeline.Finisher on Guarded), its done
// write must be refused, leaving B's claim exactly as it was, pending while
// B's effect runs or done after, and A reports the record left, with
// sink.ErrLeaseLost.
func TestGuardFinishNeverOverwritesAnotherOwner(t *testing.T) {
	t.Parallel()
	addr := integration.Redis(t)
	for _, state := range []string{sink.ClaimPending, sink.ClaimDone} {
		t.Run(state, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rdbA, rdbB := integration.NewRedisClient(t, addr), integration.NewRedisClient(t, addr)
			prefix := integration.RedisPrefix(t, rdbA)
			cut := &outage{}
			rdbA.AddHook(cut)
			const lease = 500 * time.Millisecond
			retry := sink.WithRetry(sink.Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond, Attempts: 3})
			ga, err := sink.NewGuard(rdbA, sink.WithPrefix(prefix), sink.WithLease(lease), retry)
			if err != nil {
				t.Fatal(err)
			}
			gb, err := sink.NewGuard(rdbB, sink.WithPrefix(prefix), sink.WithLease(lease), retry)
			if err != nil {
				t.Fatal(err)
			}
			var runs atomic.Int32
			a := pipeline.Guarded(ga, func(context.Context, string, *sink.Record) error {
				runs.Add(1)
				cut.down.Store(true) // A's connection is cut after the call
				return nil
			})
			rec := sinkOrder(0, 7, 1, "o1", "c", 1)
			rec.Member = "A"
			if err := batchErr(a.Apply(ctx, []sink.Record{rec})); !errors.Is(err, sink.ErrUnknown) {
				t.Fatalf("A's batch with its done write failing: %v, want ErrUnknown", err)
			}
			cut.down.Store(false)

			// B, the record's next owner, waits out A's lease and claims.
			next := rec
			next.Epoch, next.Member = 2, "B"
			running, release := make(chan struct{}), make(chan struct{})
			bDone := make(chan error, 1)
			go func() {
				out, err := gb.Do(ctx, &next, func(context.Context, string) error {
					runs.Add(1)
					close(running)
					<-release
					return nil
				})
				if err == nil && out != sink.Applied {
					err = fmt.Errorf("B's Do: %v", out)
				}
				bDone <- err
			}()
			select {
			case <-running:
			case <-ctx.Done():
				t.Fatal("B never claimed the key")
			}
			if state == sink.ClaimDone {
				close(release)
				if err := <-bDone; err != nil {
					t.Fatal(err)
				}
			}
			key := prefix + "o1"
			before, err := rdbB.Get(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			finished, left, err := a.(pipeline.Finisher).Finish(ctx, []sink.Record{rec})
			if finished != 0 || left != 1 || !errors.Is(err, sink.ErrLeaseLost) {
				t.Errorf("A's Finish = %d finished, %d left, %v; want 0, 1, ErrLeaseLost", finished, left, err)
			}
			after, err := rdbB.Get(ctx, key).Result()
			if err != nil || after != before {
				t.Errorf("A's Finish changed B's %s claim:\n  was %s\n  now %s (%v)", state, before, after, err)
			}
			if state == sink.ClaimPending {
				close(release)
				if err := <-bDone; err != nil {
					t.Fatal(err)
				}
			}
			cl, ok, err := gb.Lookup(ctx, "o1")
			if err != nil || !ok || cl.State != sink.ClaimDone || cl.Member != "B" {
				t.Errorf("claim %+v, %v, %v; want done by B", cl, ok, err)
			}
			if n := runs.Load(); n != 2 {
				t.Errorf("effect ran %d times; want 2 (A's, and B's after A's lease lapsed: the window)", n)
			}
		})
	}
}
