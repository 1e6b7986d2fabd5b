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
	if err != nil && s.failedOnce.CompareAndSwap(false, true) {
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
	rs      *privateRedis
	ext     *effectRuns
}

func newGuardFinishSetup(t *testing.T, ctx context.Context) *guardFinishSetup {
	t.Helper()
	s := &guardFinishSetup{brokers: integration.Kafka(t), rs: startPrivateRedis(t), group: integration.Group(t)}
	s.topic = integration.CreateTopic(t, s.brokers, 1)
	s.ext = &effectRuns{runs: map[string]int{}, killAt: "pay-1", kill: s.rs.kill}
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
	rdb := redis.NewClient(&redis.Options{Addr: s.rs.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
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
func (s *guardFinishSetup) options(a pipeline.Applier, obs func(pipeline.Event), more ...pipeline.Option) []pipeline.Option {
	return append([]pipeline.Option{pipeline.Brokers(s.brokers...), pipeline.Topics(s.topic), pipeline.Group(s.group),
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
	if st := p.Stats(); len(st) != 1 || st[0].Claimed != 1 || st[0].Redelivered != 2 {
		t.Errorf("next owner's stats %+v, want pay-2 claimed and pay-0, pay-1 redelivered", st)
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
				pipeline.GroupProtocol(proto), pipeline.WithHooks(pipeline.Hooks{BeforeApply: bGate.hook}))...)
			if err != nil {
				t.Fatal(err)
			}
			bDone := make(chan error, 1)
			go func() { bDone <- b.Run(ctx) }()
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
			s.rs.start(t)
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
func (l logSignal) WithAttrs([]slog.Attr) slog.Handler         { return l }
func (l logSignal) WithGroup(string) slog.Handler              { return l }
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
// timeout. The consumer must mark pay-1 done before it exits, and the next
// owner must redeliver pay-0 and pay-1 without running them.
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
			s.rs.start(t)
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
