package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// fakeReplay plans a replay of every offset of "orders" on env and returns
// it with opts (the totals ledger on env's Redis as its sink).
func fakeReplay(t *testing.T, env fakeEnv, id string, opts ...pipeline.ReplayOpt) *pipeline.Replay {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ranges, err := pipeline.PlanReplay(context.Background(), kadm.NewClient(cl), "orders", nil, pipeline.AtOffset(0), pipeline.Bound{})
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]pipeline.ReplayOpt{pipeline.Brokers(env.brokers...), pipeline.Sink(totalsLedger(t, env.rc)),
		pipeline.PoisonAttempts(1)}, opts...)
	r, err := pipeline.NewReplay(id, "orders", ranges, env.rc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReplayStopsOnPoisonNotDone: without dead letters a poison record
// (offset 4, no key) stops the replay; its partition is reported not done,
// landed and committed just before the poison record, though every record
// after it was fed and applied.
func TestReplayStopsOnPoisonNotDone(t *testing.T) {
	env := dlqEnv(t)
	produce(t, env.brokers, orderRecords()...)
	r := fakeReplay(t, env, "stop", pipeline.MaxBatch(100), pipeline.CommitEvery(100))
	err := r.Run(context.Background())
	if !errors.Is(err, pipeline.ErrPoison) || !errors.Is(err, sink.ErrNoKey) {
		t.Fatalf("Run = %v, want ErrPoison wrapping ErrNoKey", err)
	}
	ps := r.Progress()
	if len(ps) != 1 {
		t.Fatalf("progress of %d partitions, want 1", len(ps))
	}
	if p := ps[0]; p.Done || p.Landed != 4 || p.To != 10 {
		t.Fatalf("progress %+v, want not done, landed 4 (the poison offset) of 10", p)
	}
	pos, err := r.Checkpoint().Load(context.Background(), checkpoint.Partition{Topic: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if pos.Offset != 4 {
		t.Fatalf("checkpoint %+v, want offset 4", pos)
	}
}

// TestReplayCancelDuringOutage: Redis goes away while the first batch is
// being applied, so the sink retries it; cancelling ctx then makes Run
// return ctx's error once ShutdownTimeout has passed, the partition not
// done and nothing committed (no record landed).
func TestReplayCancelDuringOutage(t *testing.T) {
	env := dlqEnv(t)
	produce(t, env.brokers, orderRecords()...)
	applying := make(chan struct{})
	var once sync.Once
	fw := faults.Worker{BeforeApply: func(context.Context, checkpoint.Partition, int64, []sink.Record) {
		once.Do(func() {
			env.mr.Close() // every Redis call from now on fails: the batch is retried
			close(applying)
		})
	}}
	const shutdown = 300 * time.Millisecond
	r := fakeReplay(t, env, "outage", pipeline.ShutdownTimeout(shutdown))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(faults.WithWorker(ctx, fw)) }()
	select {
	case <-applying:
	case err := <-done:
		t.Fatalf("Run ended before its first batch: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no batch reached the sink in 30s")
	}
	cancel()
	cancelled := time.Now()
	var err error
	select {
	case err = <-done:
	case <-time.After(shutdown + 20*time.Second):
		t.Fatalf("Run still blocked %v after cancel (shutdown timeout %v)", time.Since(cancelled), shutdown)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want ctx's error", err)
	}
	if p := r.Progress()[0]; p.Done || p.Landed != 0 {
		t.Fatalf("progress %+v, want not done and nothing landed", p)
	}
	if err := env.mr.Restart(); err != nil {
		t.Fatal(err)
	}
	pos, err := r.Checkpoint().Load(context.Background(), checkpoint.Partition{Topic: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if pos.Offset != 0 || pos.Epoch != 1 {
		t.Fatalf("checkpoint %+v, want epoch 1 at offset 0: no commit past unlanded records", pos)
	}
}

// TestReplayStoredPlan: the first run of an id stores its ranges and what
// PlanGiven described; a run of the id over other ranges fails with
// ErrPlanChanged before it acquires anything (the checkpoint's epoch stays),
// one over the same ranges continues.
func TestReplayStoredPlan(t *testing.T) {
	env := newFake(t, "orders", 1)
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprint("k", i)), Value: []byte(`{"customer":"c","amount_cents":1}`)})
	}
	produce(t, env.brokers, recs...)
	ctx := context.Background()
	run := func(ranges []pipeline.Range) error {
		r, err := pipeline.NewReplay("plan", "orders", ranges, env.rc, pipeline.Brokers(env.brokers...),
			pipeline.Sink(totalsLedger(t, env.rc)), pipeline.PlanGiven("from 0"))
		if err != nil {
			t.Fatal(err)
		}
		return r.Run(ctx)
	}
	first := []pipeline.Range{{Partition: 0, From: 0, To: 6}}
	if err := run(first); err != nil {
		t.Fatal(err)
	}
	p, ok, err := pipeline.LoadPlan(ctx, env.rc, "", "plan", "orders")
	if err != nil || !ok || p.Given != "from 0" || !slices.Equal(p.Ranges, first) {
		t.Fatalf("LoadPlan = %+v, %v, %v; want %v given %q", p, ok, err, first, "from 0")
	}
	tests := []struct {
		name   string
		ranges []pipeline.Range
		want   error
	}{
		{"an earlier end", []pipeline.Range{{Partition: 0, From: 0, To: 3}}, pipeline.ErrPlanChanged},
		{"a later start", []pipeline.Range{{Partition: 0, From: 4, To: 10}}, pipeline.ErrPlanChanged},
		{"the same ranges", first, nil},
	}
	ckpt := checkpoint.NewRedis(env.rc, checkpoint.Prefix(pipeline.DefaultReplayPrefix+"plan:"))
	for _, tc := range tests {
		before, _ := ckpt.Load(ctx, checkpoint.Partition{Topic: "orders"})
		err := run(tc.ranges)
		after, _ := ckpt.Load(ctx, checkpoint.Partition{Topic: "orders"})
		if !errors.Is(err, tc.want) || (tc.want != nil && after != before) || after.Offset != 6 {
			t.Fatalf("%s: Run = %v, checkpoint %+v -> %+v; want %v, offset 6 and, when refused, untouched", tc.name, err, before, after, tc.want)
		}
	}
}
