package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
)

// TestCmdRunHTTPEffectInFlight runs two `shardpipe run --effect http
// --max-in-flight 16` processes on the real servers against a receiver
// (5ms per call) that checks, per calling process, that each customer's
// (record key's) calls never overlap and come in offset order. 600 orders
// of 12 customers, the business key the order ID (--key-from
// json:order_id). The second process joins mid-stream (a rebalance), then
// the first is SIGKILLed. One order always gets a 503 (dead-lettered after
// --effect-attempts 3 while its customer's later orders wait and the others
// flow), one a 400 (dead-lettered after one call). Every other order is
// answered 2xx; an order called twice carries the same Idempotency-Key, and
// its first 2xx call was made by the killed process (the documented
// window); both bad orders land on the dead-letter topic.
func TestCmdRunHTTPEffectInFlight(t *testing.T) {
	t.Parallel()
	const orders, customers = 600, 12
	const failing, rejected = "order-0013", "order-0021"
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := buildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 4)
	dlq := integration.CreateDeadLetterTopic(t, brokers, topic, 4)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)

	type call struct {
		consumer string
		status   int
	}
	var (
		mu       sync.Mutex
		calls    = map[string][]call{} // order ID -> calls
		busy     = map[string]bool{}   // consumer/partition/customer -> a call runs
		lastOff  = map[string]int64{}  // consumer/partition/customer -> last offset called
		problems []string              // order or overlap violations
		okCount  = map[string]bool{}   // orders answered 2xx
		half     = make(chan struct{}) // a third of the orders answered
		allDone  = make(chan struct{}) // every good order answered
		peak     = map[string]int{}    // consumer -> most calls at once
		running  = map[string]int{}    // consumer -> calls now
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, cons := r.Header.Get("Idempotency-Key"), r.Header.Get("Shardpipe-Consumer")
		off, _ := strconv.ParseInt(r.Header.Get("Shardpipe-Offset"), 10, 64)
		line := cons + "/" + r.Header.Get("Shardpipe-Partition") + "/" + r.Header.Get("Kafka-Key")
		mu.Lock()
		if busy[line] {
			problems = append(problems, fmt.Sprintf("%s: %s called while an earlier call of its customer ran", line, id))
		}
		if last, ok := lastOff[line]; ok && off < last {
			problems = append(problems, fmt.Sprintf("%s: offset %d called after %d", line, off, last))
		}
		busy[line], lastOff[line] = true, off
		running[cons]++
		peak[cons] = max(peak[cons], running[cons])
		mu.Unlock()
		time.Sleep(5 * time.Millisecond) // the receiver's latency
		status := http.StatusOK
		switch id {
		case failing:
			status = http.StatusServiceUnavailable
		case rejected:
			status = http.StatusBadRequest
		}
		w.WriteHeader(status)
		mu.Lock()
		defer mu.Unlock()
		busy[line] = false
		running[cons]--
		calls[id] = append(calls[id], call{consumer: cons, status: status})
		if status == http.StatusOK && !okCount[id] {
			okCount[id] = true
			switch len(okCount) {
			case orders / 3:
				close(half)
			case orders - 2:
				close(allDone)
			}
		}
	}))
	defer srv.Close()

	cl := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	var recs []*kgo.Record
	for i := range orders {
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "customer-%02d", i%customers),
			Value: fmt.Appendf(nil, `{"order_id":"order-%04d"}`, i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	group := integration.Group(t)
	args := func() []string {
		return []string{"run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
			"--redis", addr, "--ledger-prefix", prefix, "--key-from", "json:order_id", "--effect", "http",
			"--http-url", srv.URL + "/orders", "--http-timeout", "5s", "--commit-interval", "200ms",
			"--max-in-flight", "16", "--effect-attempts", "3", "--session-timeout", "6s",
			"--report-interval", "100ms", "--log-format", "json"}
	}
	a := start(t, "a", bin, args()...)
	select {
	case <-half:
	case <-a.done:
		t.Fatalf("a exited (code %d):\n%s", a.code, a.output())
	case <-ctx.Done():
		t.Fatalf("a third of the orders never answered: %v\n%s", ctx.Err(), a.output())
	}
	b := start(t, "b", bin, args()...)
	b.waitLine(ctx, "partitions assigned", func(map[string]any) bool { return true })
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := fmt.Sprintf("/%d", a.cmd.Process.Pid)
	select {
	case <-allDone:
	case <-b.done:
		t.Fatalf("b exited (code %d):\n%s", b.code, b.output())
	case <-ctx.Done():
		t.Fatalf("not every order was answered: %v\n%s", ctx.Err(), b.output())
	}
	b.waitLine(ctx, "progress", func(m map[string]any) bool { return num(m, "lag") == 0 })
	b.signal(syscall.SIGTERM)
	if code := b.wait(ctx); code != 0 {
		t.Fatalf("b after SIGTERM: exit %d\n%s", code, b.output())
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	most := 0
	for cons, n := range peak {
		t.Logf("%s: at most %d calls at once", cons, n)
		most = max(most, n)
	}
	if len(peak) < 2 || most < 2 {
		t.Errorf("calls came from %d processes, at most %d at once; want both, and calls at once", len(peak), most)
	}
	for i := range orders {
		id := fmt.Sprintf("order-%04d", i)
		cs := calls[id]
		switch id {
		case failing:
			// Three attempts per term that reached it: a, b, or both.
			if len(cs) < 3 || len(cs)%3 != 0 && !strings.HasSuffix(cs[0].consumer, killed) {
				t.Errorf("%s: %d calls, want 3 per attempting process", id, len(cs))
			}
			continue
		case rejected:
			if len(cs) < 1 || len(cs) > 2 {
				t.Errorf("%s: %d calls, want one (two if a was killed before its dead letter landed)", id, len(cs))
			}
			continue
		}
		var oks []call
		for _, c := range cs {
			if c.status == http.StatusOK {
				oks = append(oks, c)
			}
		}
		if len(oks) == 0 {
			t.Errorf("%s: never answered 2xx", id)
		}
		if len(oks) > 1 && !strings.HasSuffix(oks[0].consumer, killed) {
			t.Errorf("%s: called %d times, the first by %s, not the killed process", id, len(oks), oks[0].consumer)
		}
	}
	dl := integration.NewKafkaClient(t, brokers, kgo.ConsumeTopics(dlq), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[string]bool{}
	for len(got) < 2 {
		fs := dl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("dead-letter topic: %v (got %v)", err, got)
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
	for _, id := range []string{failing, rejected} {
		if !got[fmt.Sprintf(`{"order_id":"%s"}`, id)] {
			t.Errorf("dead-letter topic holds %v, want %s", got, id)
		}
	}
}
