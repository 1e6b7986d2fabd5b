package integration_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// txnTopic is a 3-partition topic written by a real transactional producer:
//
//	partition 0: committed, aborted, committed: it ends with a commit marker
//	partition 1: committed, aborted, aborted: it ends with an aborted tail
//	partition 2: committed, then a transaction left open: its last stable
//	             offset is the open transaction's first record, below the
//	             high watermark
type txnTopic struct {
	topic     string
	committed []string        // keys of the records in committed transactions
	stable    map[int32]int64 // each partition's last stable offset, once every marker is written
	hwm       map[int32]int64 // each partition's high watermark
}

// writeTxnTopic creates and writes a txnTopic. The producer stays open, with
// its last transaction, until the test ends.
func writeTxnTopic(ctx context.Context, t *testing.T, brokers []string) txnTopic {
	t.Helper()
	tt := txnTopic{topic: integration.CreateTopic(t, brokers, 3), stable: map[int32]int64{}, hwm: map[int32]int64{}}
	cl := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(tt.topic), kgo.TransactionalID(tt.topic+"-txn"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	openAt := int64(-1)
	txn := func(name string, parts []int32, end *kgo.TransactionEndTry) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			for i := range 5 {
				key := fmt.Sprintf("%s-p%d-%d", name, p, i)
				cl.Produce(ctx, &kgo.Record{Key: []byte(key), Value: []byte("{}"), Partition: p},
					func(r *kgo.Record, err error) {
						if err != nil {
							t.Errorf("produce %s: %v", key, err)
						}
						if end == nil && i == 0 {
							openAt = r.Offset
						}
					})
				if end != nil && *end == kgo.TryCommit {
					tt.committed = append(tt.committed, key)
				}
			}
		}
		if err := cl.Flush(ctx); err != nil { // written, then committed or aborted (or left open)
			t.Fatal(err)
		}
		if end != nil {
			if err := cl.EndTransaction(ctx, *end); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit, abort := kgo.TryCommit, kgo.TryAbort
	txn("a", []int32{0, 1, 2}, &commit)
	txn("b", []int32{0, 1}, &abort)
	txn("c", []int32{0}, &commit)
	txn("d", []int32{1}, &abort)
	txn("e", []int32{2}, &commit)
	txn("f", []int32{2}, nil) // left open
	if openAt < 0 {
		t.Fatal("no offset for the open transaction's first record")
	}
	// The markers are written after EndTransaction returns: wait until the
	// last stable offsets show them (partition 2's stops at the open
	// transaction).
	adm := integration.NewAdmin(t, brokers)
	for {
		lso, err := adm.ListCommittedOffsets(ctx, tt.topic)
		if err == nil {
			err = lso.Error()
		}
		hwm, herr := adm.ListEndOffsets(ctx, tt.topic)
		if err == nil && herr == nil {
			err = hwm.Error()
		}
		if err != nil && ctx.Err() == nil {
			t.Fatal(err, herr)
		}
		done := err == nil
		for p := range int32(3) {
			s, _ := lso.Lookup(tt.topic, p)
			h, _ := hwm.Lookup(tt.topic, p)
			tt.stable[p], tt.hwm[p] = s.Offset, h.Offset
			if p == 2 {
				done = done && s.Offset == openAt
			} else {
				done = done && s.Offset == h.Offset
			}
		}
		if done {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("markers never written: last stable %v, high watermarks %v", tt.stable, tt.hwm)
		}
		time.Sleep(20 * time.Millisecond) // poll interval: the broker announces no marker
	}
	t.Logf("topic %s: last stable offsets %v, high watermarks %v, %d committed records", tt.topic, tt.stable, tt.hwm,
		len(tt.committed))
	return tt
}

// TestPipelineTransactionalTopic: on a topic written in transactions, some
// aborted, one left open, the pipeline applies exactly the committed
// records and commits every partition to its last stable offset: past
// commit markers and an aborted tail, up to the open transaction.
func TestPipelineTransactionalTopic(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tt := writeTxnTopic(ctx, t, brokers)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	ledger, err := sink.NewLedger(rdb, sink.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	group := integration.Group(t)
	log := watch.New()
	p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(tt.topic), pipeline.Group(group),
		pipeline.Sink(ledger), pipeline.CommitEvery(4), pipeline.CommitInterval(50*time.Millisecond),
		pipeline.Logger(slog.New(slog.DiscardHandler)), pipeline.Observe(log.Observer("p")))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	landed := func() bool {
		applied := pipeline.Totals(p.Stats()).Applied
		return applied == int64(len(tt.committed))
	}
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	err = log.Wait(wctx, "commits to the last stable offsets", func(evs []watch.Tagged) bool {
		c := watch.Committed(evs, "")
		for n, end := range tt.stable {
			if c[checkpoint.Partition{Topic: tt.topic, Partition: n}] != end {
				return false
			}
		}
		return landed()
	})
	if err != nil {
		t.Fatalf("%v: committed %v, want the last stable offsets %v (every committed record applied: %v)",
			err, watch.Committed(log.Events(), ""), tt.stable, landed())
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	adm := integration.NewAdmin(t, brokers)
	offs, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.At != tt.stable[o.Partition] {
			t.Errorf("partition %d: the broker holds %d, want the last stable offset %d", o.Partition, o.At, tt.stable[o.Partition])
		}
	})
	if n := itest.CountRedisKeys(ctx, t, rdb, prefix+"*"); n != len(tt.committed) {
		t.Errorf("ledger holds %d keys, want the %d committed records", n, len(tt.committed))
	}
	for _, k := range tt.committed {
		if n := itest.CountRedisKeys(ctx, t, rdb, prefix+k); n != 1 {
			t.Errorf("committed record %s not in the ledger", k)
		}
	}
}

// TestCmdTransactionalTopic runs `shardpipe run` (the group consumer) over a
// txnTopic: it applies exactly the committed records, its progress line
// reaches lag 0, and `shardpipe status` shows every partition committed at
// its last stable offset with lag 0, partition 2's log end (the high
// watermark, past the open transaction) above it.
func TestCmdTransactionalTopic(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tt := writeTxnTopic(ctx, t, brokers)
	integration.CreateDeadLetterTopic(t, brokers, tt.topic, 3)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	group := integration.Group(t)
	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", tt.topic, "--group", group,
		"--redis", addr, "--ledger-prefix", prefix, "--commit-every", "4", "--commit-interval", "100ms",
		"--report-interval", "100ms", "--log-format", "json")
	run.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "applied") == int64(len(tt.committed)) })
	// Everything landed; commits follow within --commit-interval. Give it
	// 30 more progress lines (3s) to show lag 0.
	lines := 0
	last := run.WaitLine(ctx, "progress", func(m map[string]any) bool {
		lines++
		return itest.Num(m, "lag") == 0 && m["lag_err"] == nil || lines == 30
	})
	if itest.Num(last, "lag") != 0 || last["lag_err"] != nil {
		t.Errorf("progress line still shows lag %d (%v) after every committed record landed", itest.Num(last, "lag"), last["lag_err"])
	}
	st := itest.StatusJSON(ctx, t, bin, brokers, group, tt.topic)
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, run.Output())
	}
	if st.Lag != 0 || len(st.Partitions) != 3 {
		t.Errorf("status: lag %d over %d partitions, want 0 over 3: %v", st.Lag, len(st.Partitions), st)
	}
	for _, p := range st.Partitions {
		if p.Committed != tt.stable[p.Partition] || p.LastStable != tt.stable[p.Partition] ||
			p.LogEnd != tt.hwm[p.Partition] || p.Lag != 0 {
			t.Errorf("status partition %d: committed %d, last stable %d, log end %d, lag %d; want committed = last stable = %d, log end %d, lag 0",
				p.Partition, p.Committed, p.LastStable, p.LogEnd, p.Lag, tt.stable[p.Partition], tt.hwm[p.Partition])
		}
	}
	if n := itest.CountRedisKeys(ctx, t, rdb, prefix+"*"); n != len(tt.committed) {
		t.Errorf("ledger holds %d keys, want the %d committed records", n, len(tt.committed))
	}
}
