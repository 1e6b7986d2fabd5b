package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// commitLog is when each OffsetCommit request reached kfake.
type commitLog struct {
	mu     sync.Mutex
	at     []time.Time
	healed atomic.Bool // no more commits fail
}

func (l *commitLog) add(t time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = append(l.at, t)
	return len(l.at)
}

func (l *commitLog) times() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.at...)
}

// failCommits makes kfake answer the first n OffsetCommit requests with code
// (or all of them until seen.healed) and records when every OffsetCommit
// arrived.
func failCommits(c *kfake.Cluster, n int, code *kerr.Error, seen *commitLog) {
	c.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl() // inside the control function, or kfake drops it after one request
		if seen.add(time.Now()) > n || seen.healed.Load() {
			return nil, nil, false
		}
		r := req.(*kmsg.OffsetCommitRequest)
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
}

// TestCommitFailures: failed commits are retried with backoff (not in a busy
// loop: each retry comes at least the doubling backoff, 100ms, 200ms, 400ms,
// after the failed request), a broker refusal while the partition is still
// held here does not stall it, and a non-retriable error stops the pipeline.
func TestCommitFailures(t *testing.T) {
	cases := []struct {
		name  string
		code  *kerr.Error
		fatal bool
	}{
		{"rebalance in progress", kerr.RebalanceInProgress, false},
		{"illegal generation while still held", kerr.IllegalGeneration, false},
		{"not authorised", kerr.GroupAuthorizationFailed, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var rs []*kgo.Record
			for i := range 20 {
				rs = append(rs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprint(i)), Value: []byte("{}")})
			}
			produce(t, c.ListenAddrs(), rs...)
			const failed = 3
			var seen commitLog
			failCommits(c, failed, tc.code, &seen)
			r := start(t, c.ListenAddrs(), okApplier{}, pipeline.CommitEvery(5), pipeline.CommitInterval(10*time.Millisecond))
			p, log, done, ctx := r.p, r.log, r.done, r.ctx
			if tc.fatal {
				if err := <-done; !errors.Is(err, tc.code) {
					t.Fatalf("Run = %v, want it to stop on %v", err, tc.code)
				}
				return
			}
			if err := log.Wait(ctx, "commit to the end", func(evs []watch.Tagged) bool {
				return watch.Committed(evs, "")[checkpoint.Partition{Topic: "orders"}] == 20
			}); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			at := seen.times()
			if len(at) <= failed {
				t.Fatalf("%d OffsetCommit requests, want the %d refused ones retried", len(at), failed)
			}
			for i := 1; i <= failed; i++ {
				// The i-th failure in a row waits 50ms<<i before the next
				// commit; the gap seen by the broker can only be longer.
				gap, want := at[i].Sub(at[i-1]), 50*time.Millisecond<<i
				t.Logf("retry %d came %v after the refused commit (backoff %v)", i, gap.Round(time.Millisecond), want)
				if gap < want {
					t.Errorf("retry %d came %v after the refused commit, want at least the backoff %v", i, gap, want)
				}
			}
			fenced := pipeline.Totals(p.Stats()).Fenced
			if want := int64(0); tc.code == kerr.IllegalGeneration {
				if fenced < 1 {
					t.Fatalf("fenced=%d, want the broker's refusals counted", fenced)
				}
			} else if fenced != want {
				t.Fatalf("fenced=%d, want %d", fenced, want)
			}
		})
	}
}

// TestCloseAndAbortWithoutRun: a pipeline that never ran closes promptly and
// leaves the group, and cannot be run afterwards.
func TestCloseAndAbortWithoutRun(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, stop := range []string{"close", "abort"} {
		p, err := pipeline.New(pipeline.Brokers(c.ListenAddrs()...), pipeline.Topics("orders"), pipeline.Group("g-"+stop),
			pipeline.Sink(okApplier{}), pipeline.Logger(quiet()))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if stop == "close" {
			if err := p.Close(ctx); err != nil {
				t.Fatalf("Close without Run: %v", err)
			}
		} else {
			p.Abort()
		}
		cancel()
		if err := p.Run(context.Background()); err == nil {
			t.Fatalf("Run after %s succeeded", stop)
		}
	}
}

// okApplier lands every record as applied.
type okApplier struct{}

func (okApplier) Apply(_ context.Context, b []sink.Record) ([]sink.Result, error) {
	res := make([]sink.Result, len(b))
	for i := range res {
		res[i] = sink.Result{Key: string(b[i].Key), Outcome: sink.Applied}
	}
	return res, nil
}

// countApplier lands every record as applied and counts them.
type countApplier struct{ n *atomic.Int64 }

func (a countApplier) Apply(ctx context.Context, b []sink.Record) ([]sink.Result, error) {
	a.n.Add(int64(len(b)))
	return okApplier{}.Apply(ctx, b)
}

// TestUncommittedBound: while every commit fails, a partition lands at most
// its bound of records past the last commit (by default ten times the larger
// of CommitEvery and MaxBatch, or MaxUncommitted) and then stops taking
// records (its queue fills and its fetching pauses) until a commit succeeds;
// once commits succeed again it goes on to the end, every record applied once.
func TestUncommittedBound(t *testing.T) {
	const records = 2000
	cases := []struct {
		name  string
		opts  []pipeline.GroupOpt
		bound int64
	}{
		{"default", nil, 10 * 10},
		{"MaxUncommitted", []pipeline.GroupOpt{pipeline.MaxUncommitted(35)}, 35},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var rs []*kgo.Record
			for i := range records {
				rs = append(rs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprint(i)), Value: []byte("{}")})
			}
			produce(t, c.ListenAddrs(), rs...)
			var seen commitLog
			failCommits(c, 1<<30, kerr.RebalanceInProgress, &seen) // every commit fails until healed below
			var applied atomic.Int64
			r := start(t, c.ListenAddrs(), countApplier{&applied}, append([]pipeline.GroupOpt{pipeline.CommitEvery(10),
				pipeline.MaxBatch(10), pipeline.CommitInterval(10 * time.Millisecond)}, tc.opts...)...)
			// Wait for the bound to be reached, then for three more failed
			// commits: time enough for a partition that ignores the bound to
			// run far past it.
			for applied.Load() < tc.bound {
				select {
				case err := <-r.done:
					t.Fatalf("Run ended: %v", err)
				case <-r.ctx.Done():
					t.Fatalf("applied %d, never reached the bound %d", applied.Load(), tc.bound)
				case <-time.After(10 * time.Millisecond): // poll interval: the count has no event of its own
				}
			}
			failed := len(seen.times())
			for len(seen.times()) < failed+3 {
				select {
				case <-r.ctx.Done():
					t.Fatal("no commit retried at the bound")
				case <-time.After(10 * time.Millisecond): // poll interval
				}
			}
			got := applied.Load()
			landed := r.p.Stats()[0].Landed
			t.Logf("commits failing: %d records applied, landed to offset %d, bound %d", got, landed, tc.bound)
			if got > tc.bound || landed > tc.bound {
				t.Fatalf("commits failing: %d records applied (landed to %d) past the last commit, want at most %d",
					got, landed, tc.bound)
			}
			if paused := r.p.Client().PauseFetchPartitions(nil); len(paused["orders"]) != 1 {
				t.Fatalf("at the bound, paused partitions %v, want orders/0: its fetching stops", paused)
			}
			seen.healed.Store(true)
			if err := r.log.Wait(r.ctx, "commit to the end", func(evs []watch.Tagged) bool {
				return watch.Committed(evs, "")[checkpoint.Partition{Topic: "orders"}] == records
			}); err != nil {
				t.Fatal(err)
			}
			if err := r.p.Close(r.ctx); err != nil {
				t.Fatal(err)
			}
			if n := applied.Load(); n != records {
				t.Fatalf("applied %d records in all, want each of the %d once", n, records)
			}
		})
	}
}
