package pipeline_test

import (
	"context"
	"errors"
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
	"github.com/shardpipe/shardpipe/sink"
)

// dlqEnv is a kfake cluster with "orders" and "orders.dlq" (one partition
// each) and a miniredis.
func dlqEnv(t *testing.T) fakeEnv {
	t.Helper()
	return dlqEnvOf(t, 1, "orders", "orders.dlq")
}

// dlqEnvOf is a kfake cluster seeded with topics of partitions each, and a
// miniredis.
func dlqEnvOf(t *testing.T, partitions int32, topics ...string) fakeEnv {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	mr := miniredis.RunT(t)
	rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rc.Close() })
	return fakeEnv{brokers: c.ListenAddrs(), rc: rc, mr: mr}
}

// orderRecords returns 10 orders for the totals effect; offset 4 has no key
// and offset 7 no amount: two poison records.
func orderRecords() []*kgo.Record {
	var rs []*kgo.Record
	for i := range 10 {
		key := []byte(fmt.Sprintf("order-%d", i))
		value := fmt.Sprintf(`{"customer":"c%d","amount_cents":%d}`, i%3, 100+i)
		switch i {
		case 4:
			key = nil
		case 7:
			value = `{"customer":"c1"}`
		}
		rs = append(rs, &kgo.Record{Topic: "orders", Key: key, Value: []byte(value),
			Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte(fmt.Sprint("t", i))}}})
	}
	return rs
}

func totalsLedger(t *testing.T, rc redis.UniversalClient) *sink.Ledger {
	t.Helper()
	l, err := sink.NewLedger(rc, sink.WithPrefix("t:"),
		sink.WithEffect(sink.Totals{Hash: "totals", GroupField: "customer", AmountField: "amount_cents"}))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestPoisonStop: without dead letters a poison record is attempted
// PoisonAttempts times, then stops the pipeline with an error naming its
// partition and offset, the committed offset just before it.
func TestPoisonStop(t *testing.T) {
	env := dlqEnv(t)
	produce(t, env.brokers, orderRecords()...)
	app := &offsetCounter{Applier: totalsLedger(t, env.rc)}
	r := start(t, env.brokers, app, pipeline.CommitEvery(2), pipeline.PoisonAttempts(3))
	err := <-r.done
	if !errors.Is(err, pipeline.ErrPoison) || !errors.Is(err, sink.ErrNoKey) {
		t.Fatalf("Run = %v, want ErrPoison wrapping ErrNoKey", err)
	}
	if !strings.Contains(err.Error(), "orders/0") || !strings.Contains(err.Error(), "offset 4") {
		t.Fatalf("Run = %v, want it to name orders/0 offset 4", err)
	}
	requireRecordError(t, err, pipeline.ErrPoison, sink.ErrNoKey, 4, 3)
	if n := app.count(4); n != 3 {
		t.Fatalf("offset 4 attempted %d times, want 3", n)
	}
	if c := watch.Committed(r.log.Events(), "")[checkpoint.Partition{Topic: "orders"}]; c != 4 {
		t.Fatalf("committed %d, want 4 (just before the poison record)", c)
	}
}

// TestPoisonDeadLetter: each poison record is attempted PoisonAttempts
// times, then written once to orders.dlq with its key, value and headers
// plus the error, source and attempts headers, and the partition commits to
// its end.
func TestPoisonDeadLetter(t *testing.T) {
	env := dlqEnv(t)
	src := orderRecords()
	produce(t, env.brokers, src...)
	app := &offsetCounter{Applier: totalsLedger(t, env.rc)}
	r := start(t, env.brokers, app, pipeline.CommitEvery(5), pipeline.PoisonAttempts(2),
		pipeline.DeadLetters(env.rc, "t:"))
	part := checkpoint.Partition{Topic: "orders"}
	if err := r.log.Wait(r.ctx, "commit to the end", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "")[part] == 10
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.p.Close(r.ctx); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{4, 7} {
		if n := app.count(off); n != 2 {
			t.Errorf("offset %d attempted %d times, want 2", off, n)
		}
	}
	s := r.p.Stats()[0]
	if s.Applied != 8 || s.DeadLettered != 2 || s.DeadLetterReplays != 0 {
		t.Fatalf("stats %+v, want 8 applied and 2 dead-lettered", s)
	}
	got := readAll(t, env.brokers, "orders.dlq")
	if len(got) != 2 {
		t.Fatalf("dead-letter topic holds %d records, want 2", len(got))
	}
	for i, tc := range []struct {
		off   int64
		cause string
	}{{4, "no business key"}, {7, "bad record value"}} {
		d, s := got[i], src[tc.off]
		checks := map[string][2]string{
			"key":                             {string(d.Key), string(s.Key)},
			"value":                           {string(d.Value), string(s.Value)},
			"trace":                           {header(d, "trace"), header(s, "trace")},
			pipeline.HeaderSourceTopic:        {header(d, pipeline.HeaderSourceTopic), "orders"},
			pipeline.HeaderSourcePartition:    {header(d, pipeline.HeaderSourcePartition), "0"},
			pipeline.HeaderSourceOffset:       {header(d, pipeline.HeaderSourceOffset), fmt.Sprint(tc.off)},
			pipeline.HeaderAttempts:           {header(d, pipeline.HeaderAttempts), "2"},
			pipeline.HeaderError + " (cause)": {fmt.Sprint(strings.Contains(header(d, pipeline.HeaderError), tc.cause)), "true"},
		}
		for name, c := range checks {
			if c[0] != c[1] {
				t.Errorf("dead letter of offset %d: %s = %q, want %q", tc.off, name, c[0], c[1])
			}
		}
		if v, _ := env.mr.DB(0).Get(fmt.Sprintf("t:dlq:orders:0:%d", tc.off)); !strings.Contains(v, `"state":"done"`) {
			t.Errorf("marker of offset %d = %q, want done", tc.off, v)
		}
	}
}

// TestDeadLetterMarkers: a replayed poison record finds its marker in one
// of its states and lands in the dead-letter topic exactly once: done means
// already written; a lapsed pending claim means look in the topic first; a
// live foreign claim is waited for.
func TestDeadLetterMarkers(t *testing.T) {
	now := time.Now().UTC()
	pending := func(until time.Time) string {
		return fmt.Sprintf(`{"state":"pending","owner":"other/1","at":%q,"until":%q}`,
			now.Add(-time.Second).Format(time.RFC3339Nano), until.Format(time.RFC3339Nano))
	}
	for _, tc := range []struct {
		name           string
		marker         string
		alreadyWritten bool
		written, repl  int64
	}{
		{"done", `{"state":"done","owner":"other/1","at":"2026-01-01T00:00:00Z","until":"2026-01-01T00:00:15Z"}`, true, 0, 1},
		{"lapsed, written before", pending(now.Add(-time.Millisecond)), true, 0, 1},
		{"lapsed, never written", pending(now.Add(-time.Millisecond)), false, 1, 0},
		{"live lease, then lapsed", pending(now.Add(300 * time.Millisecond)), false, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := dlqEnv(t)
			bad := &kgo.Record{Topic: "orders", Key: nil, Value: []byte(`{}`)}
			// the good record after it releases it to be dead-lettered
			good := &kgo.Record{Topic: "orders", Key: []byte("order-1"), Value: []byte(`{"customer":"c1","amount_cents":100}`)}
			produce(t, env.brokers, bad, good)
			if err := env.rc.Set(context.Background(), "t:dlq:orders:0:0", tc.marker, 0).Err(); err != nil {
				t.Fatal(err)
			}
			if tc.alreadyWritten {
				produce(t, env.brokers, &kgo.Record{Topic: "orders.dlq", Value: []byte(`{}`), Headers: []kgo.RecordHeader{
					{Key: pipeline.HeaderSourceTopic, Value: []byte("orders")},
					{Key: pipeline.HeaderSourcePartition, Value: []byte("0")},
					{Key: pipeline.HeaderSourceOffset, Value: []byte("0")}}})
			}
			r := start(t, env.brokers, totalsLedger(t, env.rc), pipeline.CommitEvery(1), pipeline.PoisonAttempts(1),
				pipeline.DeadLetters(env.rc, "t:"))
			if err := r.log.Wait(r.ctx, "commit past the poison record", func(evs []watch.Tagged) bool {
				return watch.Committed(evs, "")[checkpoint.Partition{Topic: "orders"}] == 2
			}); err != nil {
				t.Fatal(err)
			}
			if err := r.p.Close(r.ctx); err != nil {
				t.Fatal(err)
			}
			s := r.p.Stats()[0]
			if s.DeadLettered != tc.written || s.DeadLetterReplays != tc.repl {
				t.Fatalf("dead-lettered %d, replays %d; want %d and %d", s.DeadLettered, s.DeadLetterReplays, tc.written, tc.repl)
			}
			if got := readAll(t, env.brokers, "orders.dlq"); len(got) != 1 {
				t.Fatalf("dead-letter topic holds %d records, want exactly 1", len(got))
			}
			if v, _ := env.mr.DB(0).Get("t:dlq:orders:0:0"); !strings.Contains(v, `"state":"done"`) {
				t.Fatalf("marker = %q, want done", v)
			}
		})
	}
}
