package integration_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
)

// groupClient joins a new group on topic with autocommit off, keeps polling
// in the background, and returns once it holds every partition, with its
// generation.
func groupClient(ctx context.Context, t *testing.T, brokers []string, topic string, partitions int) (*kgo.Client, int64) {
	t.Helper()
	assigned := make(chan int, 16)
	cl := integration.NewKafkaClient(t, brokers, kgo.ConsumerGroup(integration.Group(t)), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			assigned <- len(m[topic])
		}))
	go func() {
		for ctx.Err() == nil {
			if cl.PollRecords(ctx, 100).IsClientClosed() {
				return
			}
		}
	}()
	held := 0
	for held < partitions {
		select {
		case n := <-assigned:
			held += n
		case <-ctx.Done():
			t.Fatalf("assigned %d of %d partitions: %v", held, partitions, ctx.Err())
		}
	}
	_, gen := cl.GroupMetadata()
	return cl, int64(gen)
}

// TestKafkaCommitFairness: 12 partitions of one client commit in a tight loop
// through the Kafka store, whose commits share OffsetCommit requests. No
// single Commit may take long (a caller that leads a shared request sends a
// bounded amount and hands over, instead of sending for the others for as
// long as they keep coming), every partition keeps moving, and releasing the
// partitions one by one while the rest keep committing returns promptly.
func TestKafkaCommitFairness(t *testing.T) {
	const (
		partitions = 12
		run        = 4 * time.Second
		bound      = time.Second // a Commit waits for at most the request in flight and its own
		minCommits = 20          // per partition in the run; a round trip here takes a few ms
	)
	brokers := integration.Kafka(t)
	topic := integration.CreateTopic(t, brokers, partitions)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, gen := groupClient(ctx, t, brokers, topic, partitions)
	store := checkpoint.NewKafka(cl)
	for i := range partitions {
		store.Assign(checkpoint.Partition{Topic: topic, Partition: int32(i)}, gen)
	}

	type result struct {
		commits int
		longest time.Duration
		err     error
	}
	results := make([]result, partitions)
	stop := make(chan struct{})
	stopOnce := sync.OnceFunc(func() { close(stop) })
	var wg sync.WaitGroup
	for i := range partitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := checkpoint.Partition{Topic: topic, Partition: int32(i)}
			r := &results[i]
			for off := int64(1); ; off++ {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				err := store.Commit(ctx, p, gen, off)
				r.longest = max(r.longest, time.Since(t0))
				if errors.Is(err, checkpoint.ErrStaleEpoch) { // released below
					return
				}
				if err != nil {
					r.err = err
					return
				}
				r.commits++
			}
		}()
	}
	runFor := time.NewTimer(run)
	<-runFor.C // the run's own length: nothing to wait for
	// Then revoke the partitions one by one while the others go on: a
	// Release waits for its partition's commit in flight, so it must be as
	// prompt as a Commit.
	var slowest time.Duration
	for i := range partitions {
		released := make(chan time.Duration, 1)
		go func() {
			t0 := time.Now()
			store.Release(checkpoint.Partition{Topic: topic, Partition: int32(i)}, gen)
			released <- time.Since(t0)
		}()
		select {
		case d := <-released:
			slowest = max(slowest, d)
		case <-time.After(10 * bound):
			t.Errorf("Release of partition %d still blocked after %v while the others commit", i, 10*bound)
			stopOnce() // let the others end, so the Release can return
			slowest = max(slowest, 10*bound+<-released)
		}
	}
	stopOnce()
	wg.Wait()

	var longest time.Duration
	for i, r := range results {
		t.Logf("partition %2d: %5d commits, longest Commit %v", i, r.commits, r.longest.Round(time.Microsecond))
		if r.err != nil {
			t.Errorf("partition %d: %v", i, r.err)
		}
		longest = max(longest, r.longest)
		if r.commits < minCommits {
			t.Errorf("partition %d committed %d times in %v, want at least %d: it stalled", i, r.commits, run, minCommits)
		}
	}
	t.Logf("longest single Commit %v; longest Release %v", longest.Round(time.Microsecond), slowest.Round(time.Microsecond))
	if longest > bound {
		t.Errorf("longest single Commit took %v, want at most %v", longest, bound)
	}
	if slowest > bound {
		t.Errorf("a Release while the others commit took %v, want at most %v", slowest, bound)
	}
}
