package pipeline_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestDeadLetterPlaceholder: a poison record whose dead letter is larger
// than the dead-letter topic's max.message.bytes does not stop the
// partition: a placeholder lands in its place (no key, no value; the
// source topic, partition and offset, the key's and value's length and
// SHA-256, the refusal and the cause), its marker is marked done, and the
// partition commits to its end. A replay behind a lapsed pending marker
// finds the placeholder by its source headers and writes nothing more.
func TestDeadLetterPlaceholder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		key, value string // of the poison record at offset 1
	}{
		{"value too large", "", incompressible(8192)},
		{"key too large", incompressible(8192), `{"customer":"c1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			mr := miniredis.RunT(t)
			rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { _ = rc.Close() })
			brokers := c.ListenAddrs()
			createTopic(t, brokers, "orders.dlq", map[string]*string{"max.message.bytes": ptr("4096")})
			poison := &kgo.Record{Topic: "orders", Value: []byte(tc.value)}
			if tc.key != "" {
				poison.Key = []byte(tc.key)
			}
			// A good record first: the partition has a success before its poison record.
			produce(t, brokers,
				&kgo.Record{Topic: "orders", Key: []byte("order-0"), Value: []byte(`{"customer":"c0","amount_cents":100}`)},
				poison,
				&kgo.Record{Topic: "orders", Key: []byte("order-2"), Value: []byte(`{"customer":"c2","amount_cents":102}`)})
			run := func(group string) pipeline.PartitionStats {
				t.Helper()
				r := start(t, brokers, totalsLedger(t, rc), pipeline.Group(group), pipeline.CommitEvery(1),
					pipeline.PoisonAttempts(1), pipeline.DeadLetters(rc, "t:"))
				commitOrStop(t, r, 3)
				if err := r.p.Close(r.ctx); err != nil {
					t.Fatal(err)
				}
				return r.p.Stats()[0]
			}
			if s := run("g"); s.DeadLettered != 1 || s.Applied != 2 {
				t.Fatalf("stats %+v, want 2 applied and 1 dead-lettered", s)
			}
			got := readAll(t, brokers, "orders.dlq")
			if len(got) != 1 {
				t.Fatalf("dead-letter topic holds %d records, want 1 placeholder", len(got))
			}
			d := got[0]
			if d.Key != nil || d.Value != nil {
				t.Errorf("placeholder has a %d-byte key and a %d-byte value, want neither", len(d.Key), len(d.Value))
			}
			digest := func(s string) string { return fmt.Sprintf("%d bytes, sha256 %x", len(s), sha256.Sum256([]byte(s))) }
			for name, want := range map[string]string{
				pipeline.HeaderSourceTopic:     "orders",
				pipeline.HeaderSourcePartition: "0",
				pipeline.HeaderSourceOffset:    "1",
				pipeline.HeaderAttempts:        "1",
				pipeline.HeaderSourceKey:       digest(tc.key),
				pipeline.HeaderSourceValue:     digest(tc.value),
			} {
				if h := header(d, name); h != want {
					t.Errorf("placeholder: %s = %q, want %q", name, h, want)
				}
			}
			if h := header(d, pipeline.HeaderTooLarge); !strings.Contains(h, "MESSAGE_TOO_LARGE") {
				t.Errorf("placeholder: %s = %q, want it to name MESSAGE_TOO_LARGE", pipeline.HeaderTooLarge, h)
			}
			if h := header(d, pipeline.HeaderError); h == "" {
				t.Errorf("placeholder: no %s", pipeline.HeaderError)
			}
			if v, _ := mr.DB(0).Get("t:dlq:orders:0:1"); !strings.Contains(v, `"state":"done"`) {
				t.Fatalf("marker = %q, want done", v)
			}

			// A crash between the write and the done mark leaves the marker
			// pending: the replay must find the placeholder, not write again.
			now := time.Now().UTC()
			lapsed := fmt.Sprintf(`{"state":"pending","owner":"dead/1","at":%q,"until":%q}`,
				now.Add(-time.Second).Format(time.RFC3339Nano), now.Add(-time.Millisecond).Format(time.RFC3339Nano))
			if err := rc.Set(context.Background(), "t:dlq:orders:0:1", lapsed, 0).Err(); err != nil {
				t.Fatal(err)
			}
			if s := run("g2"); s.DeadLettered != 0 || s.DeadLetterReplays != 1 {
				t.Fatalf("replay: stats %+v, want no dead letter written and 1 found written", s)
			}
			if n := len(readAll(t, brokers, "orders.dlq")); n != 1 {
				t.Fatalf("after the replay the dead-letter topic holds %d records, want 1", n)
			}
		})
	}
}

// commitOrStop waits for r to commit orders/0 at want, failing at once if
// Run returns first (the partition stopped).
func commitOrStop(t *testing.T, r running, want int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	waited := make(chan error, 1)
	go func() {
		waited <- r.log.Wait(ctx, fmt.Sprintf("commit at %d", want), func(evs []watch.Tagged) bool {
			return watch.Committed(evs, "")[checkpoint.Partition{Topic: "orders"}] == want
		})
	}()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case err := <-r.done:
		t.Fatalf("Run = %v before committing %d", err, want)
	}
}
