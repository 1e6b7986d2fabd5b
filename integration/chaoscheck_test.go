package integration_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
	"github.com/shardpipe/shardpipe/internal/orders"
)

// TestChaosCheckerOnRealServers gives the chaos checker a topic, a DLQ, a
// ledger and committed offsets built by hand on the real servers: it must
// pass them when they are right, count a poison record dead-lettered twice
// as doubled and a missing ledger key as lost, and its watcher must see a
// committed offset that goes backwards.
func TestChaosCheckerOnRealServers(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	topic, dlq := integration.CreateTopic(t, brokers, 2), integration.CreateTopic(t, brokers, 1)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	group := integration.Group(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cl := integration.NewKafkaClient(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	order := func(p int32, id, cust string, cents int) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: p, Key: []byte(id),
			Value: orders.Order{OrderID: id, Customer: cust, AmountCents: int64(cents)}.JSON()}
	}
	src := []*kgo.Record{
		order(0, "a", "x", 100), order(0, "b", "x", 50), {Topic: topic, Partition: 0, Key: []byte("p1"), Value: []byte("not json")},
		order(1, "c", "y", 7), order(1, "a", "x", 100), {Topic: topic, Partition: 1, Value: []byte(`{"customer":"y","amount_cents":1}`)},
	}
	for _, r := range src { // one at a time, so offsets follow the slice
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	deadLetter := func(r *kgo.Record) *kgo.Record {
		return &kgo.Record{Topic: dlq, Partition: 0, Key: r.Key, Value: r.Value, Headers: []kgo.RecordHeader{
			{Key: chaoscheck.HeaderError, Value: []byte("bad value")},
			{Key: chaoscheck.HeaderSourceTopic, Value: []byte(topic)},
			{Key: chaoscheck.HeaderSourcePartition, Value: fmt.Appendf(nil, "%d", r.Partition)},
			{Key: chaoscheck.HeaderSourceOffset, Value: fmt.Appendf(nil, "%d", r.Offset)},
			{Key: chaoscheck.HeaderAttempts, Value: []byte("1")},
		}}
	}
	for _, r := range []*kgo.Record{src[2], src[5]} {
		if err := cl.ProduceSync(ctx, deadLetter(r)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(p int32, off int64) string {
		return fmt.Sprintf(`{"topic":%q,"partition":%d,"offset":%d,"epoch":1,"at":"2026-01-01T00:00:00Z","state":"applied"}`, topic, p, off)
	}
	totals := prefix + "totals"
	if err := rdb.MSet(ctx, prefix+"ledger:a", claim(0, 0), prefix+"ledger:b", claim(0, 1), prefix+"ledger:c", claim(1, 0)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, totals, "x", 150, "y", 7).Err(); err != nil {
		t.Fatal(err)
	}

	w, err := chaoscheck.NewWatcher(brokers, group, topic)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wstop := context.WithCancel(ctx)
	wdone := make(chan struct{})
	go func() { defer close(wdone); w.Run(wctx, 20*time.Millisecond) }()
	defer func() { wstop(); <-wdone }()
	adm := integration.NewAdmin(t, brokers)
	commit := func(p0, p1 int64) {
		t.Helper()
		var offs kadm.Offsets
		offs.AddOffset(topic, 0, p0, -1)
		offs.AddOffset(topic, 1, p1, -1)
		if err := adm.CommitAllOffsets(ctx, group, offs); err != nil {
			t.Fatal(err)
		}
		_, before := w.Decreases()
		for { // wait until the watcher read the offsets twice after the commit
			if _, polls := w.Decreases(); polls.Seen >= before.Seen+2 {
				return
			}
			if ctx.Err() != nil {
				t.Fatal("the watcher stopped polling")
			}
			time.Sleep(5 * time.Millisecond) // poll interval of a condition, not a wait for an event
		}
	}
	commit(3, 3)

	cfg := chaoscheck.Config{Brokers: brokers, Redis: addr, Topic: topic, DLQTopic: dlq, Group: group,
		LedgerPrefix: prefix + "ledger:", TotalsHash: totals}
	verify := func() chaoscheck.Report {
		t.Helper()
		r, err := chaoscheck.Verify(ctx, cfg, w, chaoscheck.Faults{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := verify(); !r.OK() || r.Orders != 4 || r.Unique != 3 || r.Poison != 2 || r.DLQ != 2 {
		t.Fatalf("a correct run: want OK with 4 orders, 3 unique, 2 poison, 2 in the DLQ; got\n%s", r)
	}

	if err := cl.ProduceSync(ctx, deadLetter(src[2])).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if r := verify(); r.OK() || r.Doubled != 1 || r.Lost != 0 {
		t.Fatalf("a poison record dead-lettered twice: want doubled=1 lost=0; got\n%s", r)
	}
	if err := rdb.Del(ctx, prefix+"ledger:b").Err(); err != nil {
		t.Fatal(err)
	}
	if r := verify(); r.Lost != 1 || !strings.Contains(strings.Join(r.Violations, "\n"), `order "b"`) {
		t.Fatalf("a missing ledger key: want lost=1 naming order b; got\n%s", r)
	}

	commit(1, 3)
	ds, _ := w.Decreases()
	if len(ds) != 1 || ds[0].Partition != 0 || ds[0].From != 3 || ds[0].To != 1 {
		t.Fatalf("the watcher saw %v, want partition 0 going back from 3 to 1", ds)
	}
}
