package cmdtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// httpCall is one request the test's receiver got.
type httpCall struct {
	key, kafkaKey, trace, consumer, body string
	topic                                string
	partition                            int32
	offset                               int64
	status                               int
}

// TestCmdRunHTTPEffect runs `shardpipe run --effect http` on the real
// servers against a receiver in the test: 200 orders plus 20 re-sends and
// a keyless record. Each order is POSTed once with its value as body, the
// business key as Idempotency-Key, its Kafka key, headers and position, and
// the caller's host/pid; re-sends are suppressed by the guard ledger (a
// done claim per order); a 503 is an error whose batch is retried until a
// 2xx; the keyless record goes to the dead-letter topic without a call.
func TestCmdRunHTTPEffect(t *testing.T) {
	t.Parallel()
	const orders, resends = 200, 20
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 4)
	dlq := integration.CreateDeadLetterTopic(t, brokers, topic, 4)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)

	var (
		mu      sync.Mutex
		calls   []httpCall
		ok      = map[string]bool{}
		allDone = make(chan struct{})
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p, _ := strconv.ParseInt(r.Header.Get("Shardpipe-Partition"), 10, 32)
		o, _ := strconv.ParseInt(r.Header.Get("Shardpipe-Offset"), 10, 64)
		c := httpCall{key: r.Header.Get("Idempotency-Key"), kafkaKey: r.Header.Get("Kafka-Key"),
			trace: r.Header.Get("Kafka-Header-Trace"), consumer: r.Header.Get("Shardpipe-Consumer"), body: string(b),
			topic: r.Header.Get("Shardpipe-Topic"), partition: int32(p), offset: o, status: http.StatusOK}
		mu.Lock()
		defer mu.Unlock()
		first := true
		for _, prev := range calls {
			first = first && prev.key != c.key
		}
		if c.key == "order-007" && first {
			c.status = http.StatusServiceUnavailable // the batch is retried
		}
		calls = append(calls, c)
		w.WriteHeader(c.status)
		if c.status == http.StatusOK && !ok[c.key] {
			ok[c.key] = true
			if len(ok) == orders {
				close(allDone)
			}
		}
	}))
	defer srv.Close()

	cl := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	var recs []*kgo.Record
	for i := range orders + resends {
		id := fmt.Sprintf("order-%03d", i%orders)
		recs = append(recs, &kgo.Record{Key: []byte(id), Value: fmt.Appendf(nil, `{"order_id":%q,"n":%d}`, id, i%orders),
			Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("t-" + id)}}})
	}
	recs = append(recs, &kgo.Record{Value: []byte(`{"order_id":"keyless"}`)})
	res := cl.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		t.Fatal(err)
	}
	first := map[string]*kgo.Record{} // order ID -> its first record
	for _, r := range res {
		id := string(r.Record.Key)
		if f, seen := first[id]; id != "" && (!seen || r.Record.Partition == f.Partition && r.Record.Offset < f.Offset) {
			first[id] = r.Record
		}
	}

	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic,
		"--group", integration.Group(t), "--redis", addr, "--ledger-prefix", prefix, "--effect", "http",
		"--http-url", srv.URL+"/orders", "--http-timeout", "5s", "--commit-interval", "200ms",
		"--report-interval", "100ms", "--log-format", "json")
	select {
	case <-allDone:
	case <-run.Done:
		t.Fatalf("run exited (code %d):\n%s", run.Code, run.Output())
	case <-ctx.Done():
		t.Fatalf("not every order was called: %v\n%s", ctx.Err(), run.Output())
	}
	run.WaitLine(ctx, "progress", func(m map[string]any) bool {
		return itest.Num(m, "lag") == 0 && itest.Num(m, "dead_lettered") == 1 && itest.Num(m, "applied") == orders
	})
	run.Signal(syscall.SIGTERM)
	sum := run.WaitLine(ctx, "summary", func(map[string]any) bool { return true })
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("run after SIGTERM: exit %d\n%s", code, run.Output())
	}
	if got := itest.Num(sum, "suppressed"); got != resends {
		t.Errorf("summary suppressed %d, want the %d re-sends", got, resends)
	}

	host, _ := os.Hostname()
	consumer := url.PathEscape(host) + "/" + strconv.Itoa(run.Cmd.Process.Pid)
	mu.Lock()
	defer mu.Unlock()
	per := map[string][]httpCall{}
	for _, c := range calls {
		per[c.key] = append(per[c.key], c)
	}
	if len(per) != orders {
		t.Errorf("calls for %d keys, want %d (the keyless record must not be called)", len(per), orders)
	}
	for id, f := range first {
		cs := per[id]
		want := 1
		if id == "order-007" {
			want = 2
		}
		if len(cs) != want || cs[len(cs)-1].status != http.StatusOK {
			t.Errorf("%s: %d calls %+v, want %d ending in 200", id, len(cs), cs, want)
			continue
		}
		for _, c := range cs {
			if c.kafkaKey != id || c.trace != "t-"+id || c.body != string(f.Value) || c.consumer != consumer ||
				c.topic != topic || c.partition != f.Partition || c.offset != f.Offset {
				t.Errorf("%s: call %+v; want Kafka-Key %s, trace t-%s, its first record's value and position %d@%d, consumer %s",
					id, c, id, id, f.Partition, f.Offset, consumer)
			}
		}
		v, err := rdb.Get(ctx, prefix+id).Result()
		var claim struct{ State string }
		if err == nil {
			err = json.Unmarshal([]byte(v), &claim)
		}
		if err != nil || claim.State != "done" {
			t.Errorf("%s: ledger holds %q (%v), want a done claim", id, v, err)
		}
	}
	dl := integration.NewKafkaClient(t, brokers, kgo.ConsumeTopics(dlq), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := dl.PollRecords(ctx, 1)
	if err := fs.Err0(); err != nil || fs.NumRecords() != 1 || string(fs.Records()[0].Value) != `{"order_id":"keyless"}` {
		t.Errorf("dead-letter topic: %v, %d records; want the keyless record", err, fs.NumRecords())
	}
}
