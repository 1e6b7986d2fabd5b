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

// TestCmdCreateDeadLetterTopic: with no <topic>.dlq, run refuses to start
// under --create-dlq-topic=false (exit 3, naming it); by default it creates
// it with the source's partition count and replication factor, logs that it
// did, and a poison record then lands in it.
func TestCmdCreateDeadLetterTopic(t *testing.T) {
	const partitions = 3
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, partitions)
	dlq := topic + ".dlq"
	adm := integration.NewAdmin(t, brokers)
	t.Cleanup(func() { _, _ = adm.DeleteTopics(context.Background(), dlq) })
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	args := []string{"run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", integration.Group(t),
		"--redis", addr, "--ledger-prefix", prefix + "l:", "--dlq-prefix", prefix + "own:", "--poison-attempts", "1",
		"--commit-interval", "100ms", "--report-interval", "100ms", "--log-format", "json"}

	refused := itest.Start(t, "run --create-dlq-topic=false", bin, append(args, "--create-dlq-topic=false")...)
	if code := refused.Wait(ctx); code != 3 || !strings.Contains(refused.Output(), `dead-letter topic "`+dlq+`" does not exist`) {
		t.Fatalf("--create-dlq-topic=false: exit %d, want 3 naming %s:\n%s", code, dlq, refused.Output())
	}

	// A good record before the poison one on its partition: a partition with
	// no success holds its failures rather than dead-lettering them.
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("o-1"), Value: []byte("{}")}, &kgo.Record{Key: nil, Value: []byte("{}")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	run := itest.Start(t, "run", bin, args...)
	c := run.WaitLine(ctx, "created the missing dead-letter topic (--create-dlq-topic)", func(map[string]any) bool { return true })
	srcRF := replication(ctx, t, adm, topic)
	if c["topic"] != dlq || itest.Num(c, "partitions") != partitions || itest.Num(c, "replication_factor") != int64(srcRF) {
		t.Errorf("creation line %v, want topic %s, %d partitions, replication factor %d", c, dlq, partitions, srcRF)
	}
	run.WaitLine(ctx, "poison record dead-lettered", func(map[string]any) bool { return true })
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, run.Output())
	}
	md, err := adm.Metadata(ctx, dlq)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(md.Topics[dlq].Partitions); got != partitions || replication(ctx, t, adm, dlq) != srcRF {
		t.Errorf("%s has %d partitions, replication %d; want %d and %d", dlq, got, replication(ctx, t, adm, dlq), partitions, srcRF)
	}
	ends, err := adm.ListEndOffsets(ctx, dlq)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	if n != 1 {
		t.Errorf("%s holds %d records, want the poison record", dlq, n)
	}
}

// replication returns the replica count of topic's partition 0.
func replication(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) int {
	t.Helper()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return len(md.Topics[topic].Partitions[0].Replicas)
}
