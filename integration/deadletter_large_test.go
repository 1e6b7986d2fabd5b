package integration_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestCmdDeadLetterLargeKey runs the binary on the real broker and Redis
// with --effect totals: a poison record (a value without a customer)
// whose 64 KiB binary key makes its dead letter larger than <topic>.dlq's
// max.message.bytes (64 KiB) does not stop run (before: exit 1, the same
// on every restart). A placeholder lands in its place, with no key and no
// value but the source offset and the key's length and SHA-256, so the
// record can be fetched from the source topic; the partition commits past
// it; and no log line quotes the key whole (before: one line of about
// three times the key).
func TestCmdDeadLetterLargeKey(t *testing.T) {
	t.Parallel()
	const poison, limit = 3, 65536
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	topic := integration.CreateTopic(t, brokers, 1)
	dlq := configuredDeadLetterTopic(t, brokers, topic, "max.message.bytes", strconv.Itoa(limit))
	group := integration.Group(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	key := randomBytes(limit) // random bytes: the producer's compression cannot shrink them
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	for i := range 5 { // good records before the poison one and after it
		r := &kgo.Record{Key: fmt.Appendf(nil, "order-%d", i), Value: fmt.Appendf(nil, `{"customer":"c%d","amount_cents":%d}`, i, 100+i)}
		if i == poison {
			r.Key, r.Value = key, []byte("{}")
		}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	prefix := integration.RedisPrefix(t, integration.NewRedisClient(t, addr))
	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
		"--redis", addr, "--ledger-prefix", prefix+"l:", "--effect", "totals", "--totals-hash", prefix+"totals",
		"--poison-attempts", "1", "--commit-every", "1", "--report-interval", "200ms", "--log-format", "json")
	d := run.WaitLine(ctx, "poison record dead-lettered", func(map[string]any) bool { return true })
	if itest.Num(d, "offset") != poison || d["placeholder"] == nil {
		t.Fatalf("dead-letter line %.2000v, want offset %d written as a placeholder", d, poison)
	}
	run.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "lag") == 0 && itest.Num(m, "applied") == 4 })
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("exit %d, want 0 (SIGTERM)", code)
	}
	for _, l := range strings.Split(run.Output(), "\n") {
		if len(l) > 4096 {
			t.Errorf("log line of %d bytes: %.300s...", len(l), l)
		}
	}
	if c := itest.StatusJSON(ctx, t, bin, brokers, group, topic).Committed()[0]; c != 5 {
		t.Fatalf("committed %d, want 5 (past the poison record)", c)
	}
	got := readPartition(ctx, t, brokers, dlq)
	if len(got) != 1 {
		t.Fatalf("%s holds %d records, want 1 placeholder", dlq, len(got))
	}
	ph := got[0]
	sum := sha256.Sum256(key)
	if ph.Key != nil || ph.Value != nil {
		t.Errorf("placeholder has a %d-byte key and a %d-byte value, want neither", len(ph.Key), len(ph.Value))
	}
	for name, want := range map[string]string{
		pipeline.HeaderSourceTopic:  topic,
		pipeline.HeaderSourceOffset: strconv.Itoa(poison),
		pipeline.HeaderSourceKey:    fmt.Sprintf("%d bytes, sha256 %x", len(key), sum),
	} {
		if h := recordHeader(ph, name); h != want {
			t.Errorf("placeholder: %s = %q, want %q", name, h, want)
		}
	}
	if h := recordHeader(ph, pipeline.HeaderTooLarge); !strings.Contains(h, "MESSAGE_TOO_LARGE") {
		t.Errorf("placeholder: %s = %q, want it to name MESSAGE_TOO_LARGE", pipeline.HeaderTooLarge, h)
	}
	if h := recordHeader(ph, pipeline.HeaderError); len(h) > 1024 || !strings.Contains(h, fmt.Sprintf("(%d bytes, sha256 %x)", len(key), sum[:4])) {
		t.Errorf("placeholder: %s = %.300q (%d bytes), want at most 1024 naming the key by length and hash", pipeline.HeaderError, h, len(h))
	}
	// Nothing lost: the offset the placeholder names holds the record.
	src := readPartition(ctx, t, brokers, topic)
	if len(src) != 5 || !bytes.Equal(src[poison].Key, key) {
		t.Fatalf("%s holds %d records; want 5, offset %d with the poison record's key", topic, len(src), poison)
	}
}

// readPartition returns every record of topic's partition 0 up to its end.
func readPartition(ctx context.Context, t *testing.T, brokers []string, topic string) []*kgo.Record {
	t.Helper()
	end := endOffset(ctx, t, brokers, topic)
	cl := integration.NewKafkaClient(t, brokers,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	var out []*kgo.Record
	for int64(len(out)) < end {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// recordHeader returns the value of r's header key, "" when absent.
func recordHeader(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// randomBytes returns n random bytes (seeded: the same every run).
func randomBytes(n int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}
