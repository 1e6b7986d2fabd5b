package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

type fakeEnv struct {
	brokers []string
	rc      redis.UniversalClient
	mr      *miniredis.Miniredis
}

func newFake(t *testing.T, topic string, partitions int32) fakeEnv {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	mr := miniredis.RunT(t)
	rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rc.Close() })
	return fakeEnv{brokers: c.ListenAddrs(), rc: rc, mr: mr}
}

func produce(t *testing.T, brokers []string, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// requireRecordError checks that err, a run's error, is a *RecordError for
// orders/0 at offset after attempts, under an epoch, whose Err is kind and
// whose Cause wraps cause (when not nil); errors.Is sees both through it.
func requireRecordError(t *testing.T, err, kind, cause error, offset int64, attempts int) {
	t.Helper()
	var re *pipeline.RecordError
	if !errors.As(err, &re) {
		t.Fatalf("Run = %v (%T), want a *pipeline.RecordError", err, err)
	}
	if re.Topic != "orders" || re.Partition != 0 || re.Offset != offset || re.Attempts != attempts || re.Epoch < 1 {
		t.Errorf("RecordError %+v, want orders/0 offset %d after %d attempts under an epoch", re, offset, attempts)
	}
	if re.Err != kind || !errors.Is(err, kind) {
		t.Errorf("RecordError.Err = %v, want %v (and errors.Is to see it)", re.Err, kind)
	}
	if cause != nil && (!errors.Is(re.Cause, cause) || !errors.Is(err, cause)) {
		t.Errorf("RecordError.Cause = %v, want it to wrap %v", re.Cause, cause)
	}
}

// running is a pipeline under test: started on "orders" in group "g", quiet,
// with its events in log and Run's result on done.
type running struct {
	p    *pipeline.Pipeline
	log  *watch.Log
	done chan error
	ctx  context.Context
}

func start(t *testing.T, brokers []string, a pipeline.Applier, opts ...pipeline.GroupOpt) running {
	t.Helper()
	return startFaults(t, brokers, a, faults.Worker{}, opts...)
}

// startFaults is start with fault points for Run (package internal/faults).
func startFaults(t *testing.T, brokers []string, a pipeline.Applier, fw faults.Worker, opts ...pipeline.GroupOpt) running {
	t.Helper()
	log := watch.New()
	p, err := pipeline.New(append([]pipeline.GroupOpt{pipeline.Brokers(brokers...), pipeline.Topics("orders"),
		pipeline.Group("g"), pipeline.Sink(a), pipeline.Logger(quiet()), pipeline.Observe(log.Observer("p"))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	r := running{p: p, log: log, done: make(chan error, 1), ctx: ctx}
	go func() { r.done <- p.Run(faults.WithWorker(ctx, fw)) }()
	return r
}

// countingApplier counts the sink's failed calls and signals each one.
type countingApplier struct {
	pipeline.Applier
	failures chan error
}

func (c countingApplier) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	res, err := c.Applier.Apply(ctx, b)
	if err != nil {
		select {
		case c.failures <- err:
		default:
		}
	}
	return res, err
}

// TestRedisOutageHoldsCommits: while every Redis call fails, the pipeline
// retries the batch and commits nothing; once Redis answers again every
// record is applied exactly once and the partition is committed to its end.
func TestRedisOutageHoldsCommits(t *testing.T) {
	env := newFake(t, "orders", 1)
	var rs []*kgo.Record
	for i := range 50 {
		rs = append(rs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprintf("order-%d", i)), Value: []byte("{}")})
	}
	produce(t, env.brokers, rs...)
	env.mr.SetError("LOADING Redis is loading the dataset in memory")
	ledger, err := sink.NewLedger(env.rc, sink.WithRetry(sink.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 2}))
	if err != nil {
		t.Fatal(err)
	}
	app := countingApplier{Applier: ledger, failures: make(chan error, 1)}
	r := start(t, env.brokers, app, pipeline.CommitEvery(10), pipeline.CommitInterval(time.Millisecond))
	p, log, ctx := r.p, r.log, r.ctx
	for range 3 { // three failed batch attempts in a row
		select {
		case err := <-app.failures:
			if !errors.Is(err, sink.ErrUnknown) {
				t.Fatalf("sink failure %v does not wrap ErrUnknown", err)
			}
		case <-ctx.Done():
			t.Fatal("the sink never failed")
		}
	}
	if c := watch.Committed(log.Events(), ""); len(c) != 0 {
		t.Fatalf("committed %v during the outage", c)
	}
	env.mr.SetError("")
	part := checkpoint.Partition{Topic: "orders"}
	if err := log.Wait(ctx, "commit to the end", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "")[part] == 50
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := pipeline.Totals(p.Stats()); s.Applied != 50 || s.Suppressed != 0 {
		t.Fatalf("applied=%d suppressed=%d, want 50 and 0", s.Applied, s.Suppressed)
	}
}

// TestMisconfiguredRedisStops: a reply no retry can fix (the ledger key holds
// another type) or a ledger key that holds something other than a claim
// (another program's keys under the prefix) stops the pipeline with an error
// naming the partition, the offset and the key; what landed before it is
// committed, also inside the refused record's batch, and nothing past it.
func TestMisconfiguredRedisStops(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(mr *miniredis.Miniredis)
		want error
	}{
		{"another type", func(mr *miniredis.Miniredis) { mr.HSet("shardpipe:ledger:order-6", "x", "1") }, sink.ErrMisconfigured},
		{"a string that is no claim", func(mr *miniredis.Miniredis) { mr.Set("shardpipe:ledger:order-6", "cache:v1") }, sink.ErrBadClaim},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newFake(t, "orders", 1)
			var rs []*kgo.Record
			for i := range 10 {
				rs = append(rs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprintf("order-%d", i)), Value: []byte("{}")})
			}
			produce(t, env.brokers, rs...)
			tc.set(env.mr)
			ledger, err := sink.NewLedger(env.rc)
			if err != nil {
				t.Fatal(err)
			}
			r := start(t, env.brokers, ledger, pipeline.CommitEvery(100), pipeline.MaxBatch(10))
			err = <-r.done
			if !errors.Is(err, sink.ErrMisconfigured) || !errors.Is(err, tc.want) {
				t.Fatalf("Run = %v, want ErrMisconfigured and %v", err, tc.want)
			}
			for _, want := range []string{"orders/0", "offset 6", `"shardpipe:ledger:order-6"`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Run = %v, want it to name %s", err, want)
				}
			}
			requireRecordError(t, err, sink.ErrMisconfigured, tc.want, 6, 1)
			if c := watch.Committed(r.log.Events(), "")[checkpoint.Partition{Topic: "orders"}]; c != 6 {
				t.Fatalf("committed %d, want 6: every record before the refused one", c)
			}
		})
	}
}

// notifyingApplier reports each successful batch's size on landed.
type notifyingApplier struct {
	pipeline.Applier
	landed chan int
}

func (a notifyingApplier) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	res, err := a.Applier.Apply(ctx, b)
	if err == nil {
		a.landed <- len(b)
	}
	return res, err
}

// TestCloseWhileRedisDown: Close while every Redis call fails does not wait
// out the shutdown timeout retrying the failing batch: the partition commits
// what landed before the outage and stops, leaving the rest for replay.
func TestCloseWhileRedisDown(t *testing.T) {
	env := newFake(t, "orders", 1)
	var rs []*kgo.Record
	for i := range 30 {
		rs = append(rs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprintf("order-%d", i)), Value: []byte("{}")})
	}
	produce(t, env.brokers, rs...)
	ledger, err := sink.NewLedger(env.rc, sink.WithRetry(sink.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 2}))
	if err != nil {
		t.Fatal(err)
	}
	landed := make(chan int, 100)
	app := countingApplier{Applier: notifyingApplier{Applier: ledger, landed: landed}, failures: make(chan error, 1)}
	r := start(t, env.brokers, app, pipeline.CommitEvery(0), pipeline.CommitInterval(time.Hour),
		pipeline.ShutdownTimeout(time.Minute))
	for n := 0; n < 30; {
		select {
		case k := <-landed:
			n += k
		case <-r.ctx.Done():
			t.Fatalf("%d of 30 records landed", n)
		}
	}
	env.mr.SetError("LOADING Redis is loading the dataset in memory")
	produce(t, env.brokers, &kgo.Record{Topic: "orders", Key: []byte("order-30"), Value: []byte("{}")})
	select {
	case <-app.failures:
	case <-r.ctx.Done():
		t.Fatal("the sink never failed")
	}
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	if err := r.p.Close(ctx); err != nil {
		t.Fatalf("Close while Redis is down: %v", err)
	}
	if c := watch.Committed(r.log.Events(), "")[checkpoint.Partition{Topic: "orders"}]; c != 30 {
		t.Fatalf("committed %d at Close, want 30: what landed before the outage", c)
	}
}
