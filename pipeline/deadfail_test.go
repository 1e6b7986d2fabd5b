package pipeline_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestDeadLetterStops: a dead-letter write no retry can land stops the
// pipeline, instead of stalling the partition for good, with an error
// wrapping ErrDeadLetter and the cause, naming the partition and the poison
// record's offset; what landed before it (offsets 0-3) is committed, the
// record itself is not. The dead-letter topic is left empty.
func TestDeadLetterStops(t *testing.T) {
	big := incompressible(8192) // the producer compresses: repeated bytes would fit
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, env fakeEnv) // creates orders.dlq, or not
		value string                          // of the poison record at offset 4
		cause error                           // wrapped besides ErrDeadLetter; nil: only the text
		text  string
	}{
		// Too large for the topic, the record is replaced by a placeholder
		// of a few hundred bytes: one larger than the topic takes too stops.
		{"placeholder larger than the topic takes too", func(t *testing.T, env fakeEnv) {
			createTopic(t, env.brokers, "orders.dlq", map[string]*string{"max.message.bytes": ptr("200")})
		}, big, kerr.MessageTooLarge, "its placeholder to orders.dlq/0: MESSAGE_TOO_LARGE"},
		{"topic stays unknown", func(*testing.T, fakeEnv) {}, "{}", nil, "dead-letter topic not found"},
		{"marker holds garbage", func(t *testing.T, env fakeEnv) {
			createTopic(t, env.brokers, "orders.dlq", nil)
			if err := env.rc.Set(context.Background(), "t:dlq:orders:0:4", "garbage", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}, "{}", nil, "dead-letter marker holds no marker"},
		{"marker key of another type", func(t *testing.T, env fakeEnv) {
			createTopic(t, env.brokers, "orders.dlq", nil)
			if err := env.rc.HSet(context.Background(), "t:dlq:orders:0:4", "f", "v").Err(); err != nil {
				t.Fatal(err)
			}
		}, "{}", nil, "WRONGTYPE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := dlqEnvOf(t, 1, "orders")
			tc.setup(t, env)
			recs := orderRecords()
			recs[4].Value = []byte(tc.value)
			produce(t, env.brokers, recs...)
			r := start(t, env.brokers, totalsLedger(t, env.rc), pipeline.CommitEvery(100), pipeline.PoisonAttempts(1),
				pipeline.DeadLetters(env.rc, "t:", pipeline.DeadLetterLease(300*time.Millisecond)))
			var err2 error
			select {
			case err2 = <-r.done:
			case <-time.After(20 * time.Second): // a stall: the defect
				r.p.Abort()
				t.Fatal("the pipeline did not stop within 20s: the partition stalls on the dead letter")
			}
			if !errors.Is(err2, pipeline.ErrDeadLetter) || (tc.cause != nil && !errors.Is(err2, tc.cause)) {
				t.Fatalf("Run = %v, want ErrDeadLetter wrapping %v", err2, tc.cause)
			}
			for _, want := range []string{"orders/0", "offset 4", tc.text} {
				if !strings.Contains(err2.Error(), want) {
					t.Fatalf("Run = %v, want it to name %q", err2, want)
				}
			}
			requireRecordError(t, err2, pipeline.ErrDeadLetter, tc.cause, 4, 1)
			if c := watch.Committed(r.log.Events(), "")[checkpoint.Partition{Topic: "orders"}]; c != 4 {
				t.Fatalf("committed %d, want 4 (just before the poison record)", c)
			}
			if s := r.p.Stats()[0]; s.DeadLettered != 0 || s.Applied != 4 {
				t.Fatalf("stats %+v, want 4 applied and nothing dead-lettered", s)
			}
		})
	}
}

// createTopic creates topic with one partition and the given configs.
func createTopic(t *testing.T, brokers []string, topic string, configs map[string]*string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

func ptr(s string) *string { return &s }

// incompressible returns n random letters (seeded: the same every run).
func incompressible(n int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}
