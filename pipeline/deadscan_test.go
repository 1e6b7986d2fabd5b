package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestDeadLetterScanProgress: a poison record's marker was left pending by
// an owner that died mid-write, so the new owner scans the dead-letter
// partition for an earlier write before writing. The scan is slower than
// its bound (ScanBound 200ms; every fetch takes 10ms and returns one batch
// of the 300 in the partition, about 3s in all).
//
//   - resumes: each bound that read something is followed by another from
//     where it stopped; the scan reaches the earlier write at the end and
//     does not write again (before, each bound's timeout restarted the same
//     scan from its start: it never ended).
//   - stalls: once the good record after it is taken, fetches stop answering; a bound that
//     reads nothing stops the pipeline with ErrDeadLetter naming the
//     dead-letter partition, the record left uncommitted.
func TestDeadLetterScanProgress(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stall bool
	}{{"resumes", false}, {"stalls", true}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders", "orders.dlq"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			release := make(chan struct{})
			t.Cleanup(func() { close(release) }) // runs before c.Close: wakes stalled fetches
			mr := miniredis.RunT(t)
			rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { _ = rc.Close() })
			brokers := c.ListenAddrs()

			// no key: poison; the good record after it releases it to be
			// dead-lettered (a partition with no success holds its failures)
			produce(t, brokers, &kgo.Record{Topic: "orders", Value: []byte(`{}`)}, &kgo.Record{Topic: "orders", Key: []byte("k"), Value: []byte(`{}`)})
			now := time.Now().UTC()
			marker := `{"state":"pending","owner":"dead/1","at":"` + now.Add(-time.Second).Format(time.RFC3339Nano) +
				`","until":"` + now.Add(-time.Millisecond).Format(time.RFC3339Nano) + `"}`
			if err := rc.Set(context.Background(), "t:dlq:orders:0:0", marker, 0).Err(); err != nil {
				t.Fatal(err)
			}
			// 299 dead letters of other records, then the earlier write of
			// this one, each in a batch of its own.
			for i := range 300 {
				off := "1000"
				if i == 299 {
					off = "0"
				}
				produce(t, brokers, &kgo.Record{Topic: "orders.dlq", Value: []byte(`{}`), Headers: []kgo.RecordHeader{
					{Key: pipeline.HeaderSourceTopic, Value: []byte("orders")},
					{Key: pipeline.HeaderSourcePartition, Value: []byte("0")},
					{Key: pipeline.HeaderSourceOffset, Value: []byte(off)}}})
			}
			var stalled atomic.Bool
			c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				c.SleepControl(func() {
					if stalled.Load() {
						<-release
						return
					}
					time.Sleep(10 * time.Millisecond)
				})
				return nil, nil, false
			})
			l, err := sink.NewLedger(rc, sink.WithPrefix("l:"))
			if err != nil {
				t.Fatal(err)
			}
			opts := []pipeline.GroupOpt{pipeline.CommitEvery(1), pipeline.PoisonAttempts(1),
				pipeline.KafkaOptions(kgo.FetchMaxPartitionBytes(1)),
				pipeline.DeadLetters(rc, "t:", pipeline.DeadLetterScanBound(200*time.Millisecond))}
			var fw faults.Worker
			if tc.stall {
				fw.BeforeApply = func(_ context.Context, _ checkpoint.Partition, _ int64, recs []sink.Record) {
					if recs[len(recs)-1].Offset == 1 { // the good record: its success releases the poison record
						stalled.Store(true)
					}
				}
			}
			r := startFaults(t, brokers, l, fw, opts...)
			if !tc.stall {
				if err := r.log.Wait(r.ctx, "commit past the poison record", func(evs []watch.Tagged) bool {
					return watch.Committed(evs, "")[checkpoint.Partition{Topic: "orders"}] == 2
				}); err != nil {
					t.Fatal(err)
				}
				if err := r.p.Close(r.ctx); err != nil {
					t.Fatal(err)
				}
				if s := r.p.Stats()[0]; s.DeadLettered != 0 || s.DeadLetterReplays != 1 {
					t.Fatalf("dead-lettered %d, replays %d; want 0 and 1 (found by the scan)", s.DeadLettered, s.DeadLetterReplays)
				}
				return
			}
			select {
			case err := <-r.done:
				if !errors.Is(err, pipeline.ErrDeadLetter) || !strings.Contains(err.Error(), "orders.dlq/0") {
					t.Fatalf("Run: %v; want ErrDeadLetter naming orders.dlq/0", err)
				}
			case <-r.ctx.Done():
				t.Fatal("the stalled scan did not stop the pipeline")
			}
			if got := watch.Committed(r.log.Events(), "")[checkpoint.Partition{Topic: "orders"}]; got != 0 {
				t.Fatalf("committed %d past the poison record, want 0", got)
			}
		})
	}
}
