package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// blipApplier fails Redis (miniredis's SetError) once the replay reaches
// its last record: before the batch holding it is applied (at "batch"), or
// just after it landed, so its final commit fails (at "commit"). Every
// failed sink call is sent on failures.
type blipApplier struct {
	pipeline.Applier
	env      fakeEnv
	last     int64
	at       string
	once     sync.Once
	blip     chan struct{}
	failures chan error
}

func (b *blipApplier) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	last := slices.ContainsFunc(batch, func(r sink.Record) bool { return r.Offset == b.last })
	if last && b.at == "batch" {
		b.fail()
	}
	res, err := b.Applier.Apply(ctx, batch)
	if err != nil {
		b.failures <- err
	}
	if last && err == nil && b.at == "commit" {
		b.fail()
	}
	return res, err
}

func (b *blipApplier) fail() {
	b.once.Do(func() {
		b.env.mr.SetError("LOADING Redis is loading the dataset in memory")
		close(b.blip)
	})
}

// TestReplayRetriesThroughBlipAtEnd: Redis fails once the reader has fed
// the range's end (so the worker is asked to finish): while the last batch
// is applied, or between its landing and the final commit. The replay is
// not being stopped: it retries the batch or the commit until Redis answers,
// and Run returns nil with the range done, committed to its end, every
// record applied once. (A real stop during an outage still gives up after
// committing what landed: TestReplayCancelDuringOutage.)
func TestReplayRetriesThroughBlipAtEnd(t *testing.T) {
	for _, at := range []string{"batch", "commit"} {
		t.Run(at, func(t *testing.T) {
			env := newFake(t, "orders", 1)
			const n = 10
			var rs []*kgo.Record
			want := map[string]int64{}
			for i := range n {
				c := fmt.Sprintf("c%d", i%3)
				want[c] += int64(100 + i)
				rs = append(rs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprintf("order-%d", i)),
					Value: []byte(fmt.Sprintf(`{"customer":%q,"amount_cents":%d}`, c, 100+i))})
			}
			produce(t, env.brokers, rs...)
			ledger, err := sink.NewLedger(env.rc, sink.WithPrefix("t:"),
				sink.WithEffect(sink.Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}),
				sink.WithRetry(sink.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 2}))
			if err != nil {
				t.Fatal(err)
			}
			app := &blipApplier{Applier: ledger, env: env, last: n - 1, at: at, blip: make(chan struct{}), failures: make(chan error, 64)}
			refused := make(chan struct{}, 64)
			observe := func(e pipeline.Event) {
				if e.Kind == pipeline.CommitRefused {
					refused <- struct{}{}
				}
			}
			r := fakeReplay(t, env, "blip", pipeline.Sink(app), pipeline.MaxBatch(4), pipeline.CommitEvery(4),
				pipeline.Logger(quiet()), pipeline.Observe(observe))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			select {
			case <-app.blip:
			case err := <-done:
				t.Fatalf("Run ended before its last batch: %v", err)
			case <-ctx.Done():
				t.Fatal("the last batch never reached the sink")
			}
			// Redis comes back after two failures of the last batch or of
			// the final commit: a replay that gives up on the first has
			// returned by then.
			failed := app.failures
			if at == "commit" {
				failed = nil
			}
			for n := 0; n < 2; {
				select {
				case <-failed:
					n++
				case <-refused:
					n++
				case err := <-done:
					env.mr.SetError("")
					t.Fatalf("Run = %v during a Redis blip at its end, want it to retry until the %s lands", err, at)
				case <-ctx.Done():
					t.Fatal("nothing failed during the blip")
				}
			}
			env.mr.SetError("")
			if err := <-done; err != nil {
				t.Fatalf("Run = %v after the blip, want nil", err)
			}
			p := r.Progress()[0]
			if !p.Done || p.Landed != n || p.Applied != n || p.Suppressed != 0 {
				t.Fatalf("progress %+v, want done, landed %d, applied %d, none suppressed", p, n, n)
			}
			pos, err := r.Checkpoint().Load(context.Background(), checkpoint.Partition{Topic: "orders"})
			if err != nil {
				t.Fatal(err)
			}
			if pos.Offset != n {
				t.Fatalf("checkpoint %+v, want offset %d", pos, n)
			}
			got, err := env.rc.HGetAll(context.Background(), "totals").Result()
			if err != nil {
				t.Fatal(err)
			}
			for c, cents := range want {
				if got[c] != fmt.Sprint(cents) {
					t.Errorf("totals[%s] = %q, want %d (every record applied once)", c, got[c], cents)
				}
			}
		})
	}
}
