package cmdtest_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdRetentionAndPoison runs the shardpipe binary on the real broker and
// Redis: it warns at start that the topic's infinite retention outlives
// --ttl, and writes a record without a business key to <topic>.dlq, counted
// in its summary, before a SIGTERM ends it with exit 0.
func TestCmdRetentionAndPoison(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	topic := integration.CreateTopic(t, brokers, 2)
	dlq := integration.CreateDeadLetterTopic(t, brokers, topic, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	infinite := "-1"
	if _, err := integration.NewAdmin(t, brokers).AlterTopicConfigs(ctx,
		[]kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: &infinite}}, topic); err != nil {
		t.Fatal(err)
	}
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	recs := []*kgo.Record{{Key: []byte("o-1"), Value: []byte("{}")}, {Key: nil, Value: []byte("{}")}, {Key: []byte("o-2"), Value: []byte("{}")}}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic,
		"--group", integration.Group(t), "--redis", addr, "--ledger-prefix", prefix, "--ttl", "1h",
		"--poison-attempts", "2", "--commit-interval", "100ms", "--report-interval", "200ms", "--log-format", "json")
	w := run.WaitLine(ctx, "topic retention is infinite, longer than the ledger TTL: a record replayed after its ledger entry expired applies again",
		func(m map[string]any) bool { return m["topic"] == topic })
	if w["retention"] != "infinite" || itest.Num(w, "ttl") != int64(time.Hour) || w["level"] != "WARN" {
		t.Fatalf("retention warning %v, want WARN naming retention infinite and ttl 1h", w)
	}
	d := run.WaitLine(ctx, "poison record dead-lettered", func(map[string]any) bool { return true })
	if itest.Num(d, "offset") != 1 || itest.Num(d, "attempts") != 2 || !strings.Contains(d["err"].(string), "no business key") {
		t.Fatalf("dead-letter line %v, want offset 1 after 2 attempts, no business key", d)
	}
	run.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "lag") == 0 && itest.Num(m, "applied") == 2 })
	run.Signal(syscall.SIGTERM)
	s := run.WaitLine(ctx, "summary", func(map[string]any) bool { return true })
	if code := run.Wait(ctx); code != 0 || itest.Num(s, "dead_lettered") != 1 || itest.Num(s, "applied") != 2 {
		t.Fatalf("exit %d, summary %v; want exit 0, applied 2, dead_lettered 1", code, s)
	}
	ends, err := integration.NewAdmin(t, brokers).ListEndOffsets(ctx, dlq)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	if n != 1 {
		t.Fatalf("%s holds %d records, want 1", dlq, n)
	}
}

// TestCmdPoisonStop runs the binary with --on-poison stop on the real broker
// and Redis: a record without a business key at offset 3 ends run with exit 1
// and a line naming the partition, offset and cause, and the group's
// committed offset stays at 3, just before it.
func TestCmdPoisonStop(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	topic := integration.CreateTopic(t, brokers, 1)
	group := integration.Group(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	for i, k := range []string{"a", "b", "c", "", "d"} {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(k), Value: []byte("{}")}).FirstErr(); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	rdb := integration.NewRedisClient(t, addr)
	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
		"--redis", addr, "--ledger-prefix", integration.RedisPrefix(t, rdb), "--on-poison", "stop",
		"--poison-attempts", "2", "--commit-every", "1", "--log-format", "json")
	if code := run.Wait(ctx); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, run.Output())
	}
	want := topic + "/0 epoch "
	out := run.Output()
	if !strings.Contains(out, want) || !strings.Contains(out, "offset 3 after 2 attempts: pipeline: poison record: sink: no business key") {
		t.Fatalf("output does not name %s offset 3 and the cause:\n%s", topic+"/0", out)
	}
	if c := itest.StatusJSON(ctx, t, bin, brokers, group, topic).Committed()[0]; c != 3 {
		t.Fatalf("committed %d, want 3 (just before the poison record)", c)
	}
}
