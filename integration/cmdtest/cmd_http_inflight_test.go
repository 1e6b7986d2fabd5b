package cmdtest_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdRunHTTPEffectInFlight runs `shardpipe run --effect http
// --max-in-flight 16` processes on the real servers against the receiver
// process (internal/harness/cmd/receiver: 5ms a call, the first call of about 5% of
// the orders answered 503), which checks that, per calling process,
// partition and customer (record key), calls never overlap and come in
// offset order. 600 orders of 12 customers, the business key the order ID
// (--key-from json:order_id). Process b joins mid-stream (a rebalance);
// then, with calls of a held at the receiver (received: their effects
// happened), a is SIGKILLed; b takes a's partitions, and is SIGKILLed the
// same way at half the orders; c starts and finishes. One order always gets a 503 (dead-lettered after
// --effect-attempts 3 while its customer's later orders wait and the others
// flow), one a 400 (dead-lettered after one call), one is slow (2s a call)
// while its partition's other customers flow past it. Every other order is
// answered 2xx; every call of a record carries the same Idempotency-Key; an
// order answered 2xx more than once was answered so first by a killed
// process (guard mode's documented window), and such orders exist; both bad
// orders land on the dead-letter topic.
func TestCmdRunHTTPEffectInFlight(t *testing.T) {
	t.Parallel()
	const orders, customers = 600, 12
	const failing, rejected, slow = "order-0013", "order-0021", "order-0100"
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 4)
	dlq := integration.CreateDeadLetterTopic(t, brokers, topic, 4)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	rc := itest.StartReceiver(t, "-delay", "5ms", "-fail-rate", "0.05", "-fail-keys", failing, "-reject-keys", rejected,
		"-slow-keys", slow, "-slow-delay", "2s")

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
	args := []string{"run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
		"--redis", addr, "--ledger-prefix", prefix, "--key-from", "json:order_id", "--effect", "http",
		"--http-url", rc.URL(), "--http-timeout", "5s", "--commit-interval", "200ms",
		"--max-in-flight", "16", "--effect-attempts", "3", "--session-timeout", "6s",
		"--report-interval", "100ms", "--log-format", "json"}
	okAtLeast := func(n int) func(itest.ReceiverStats) bool {
		return func(s itest.ReceiverStats) bool { return s.OKKeys >= n }
	}
	// killHeld holds the receiver's replies until victim has a call
	// received and not answered, SIGKILLs it, and releases the replies.
	killHeld := func(victim *itest.Proc, others ...*itest.Proc) string {
		id := "/" + strconv.Itoa(victim.Cmd.Process.Pid)
		rc.Control("hold")
		rc.Await(ctx, victim.Name+"'s call held", func(s itest.ReceiverStats) bool {
			for c, n := range s.HeldBy {
				if strings.HasSuffix(c, id) && n > 0 {
					return true
				}
			}
			return false
		}, append(others, victim)...)
		if err := victim.Cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-victim.Done
		rc.Control("release")
		return id
	}

	a := itest.Start(t, "a", bin, args...)
	rc.Await(ctx, "a quarter of the orders answered", okAtLeast(orders/4), a)
	b := itest.Start(t, "b", bin, args...)
	b.WaitLine(ctx, "partitions assigned", func(m map[string]any) bool { return m["partitions"] != nil })
	killedA := killHeld(a, b)
	rc.Await(ctx, "half of the orders answered", okAtLeast(orders/2), b)
	killedB := killHeld(b)
	c := itest.Start(t, "c", bin, args...)
	rc.Await(ctx, "every good order answered", okAtLeast(orders-2), c)
	c.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "lag") == 0 })
	c.Signal(syscall.SIGTERM)
	if code := c.Wait(ctx); code != 0 {
		t.Fatalf("c after SIGTERM: exit %d\n%s", code, c.Output())
	}
	killed := func(consumer string) bool {
		return strings.HasSuffix(consumer, killedA) || strings.HasSuffix(consumer, killedB)
	}

	st := rc.Stats()
	for _, p := range st.Problems {
		t.Errorf("receiver: %s", p)
	}
	calls := rc.Calls()
	per := map[string][]itest.ReceiverCall{} // order ID -> calls
	keyAt := map[string]string{}             // topic/partition/offset -> Idempotency-Key
	consumers := map[string]bool{}           // callers
	var slowCall *itest.ReceiverCall         // the slow order's first call answered
	for i, cl := range calls {
		per[cl.Key] = append(per[cl.Key], cl)
		consumers[cl.Consumer] = true
		at := fmt.Sprintf("%s/%d/%d", cl.Topic, cl.Partition, cl.Offset)
		if k, ok := keyAt[at]; ok && k != cl.Key {
			t.Errorf("record %s called with Idempotency-Key %q and %q", at, k, cl.Key)
		}
		keyAt[at] = cl.Key
		if cl.Key == slow && slowCall == nil {
			slowCall = &calls[i]
		}
	}
	if len(consumers) != 3 {
		t.Errorf("calls came from %d processes, want 3", len(consumers))
	}
	transient, dups := 0, 0
	for i := range orders {
		id := fmt.Sprintf("order-%04d", i)
		cs := per[id]
		switch id {
		case failing:
			// Three attempts per term that reached it.
			if len(cs) < 3 || len(cs)%3 != 0 && !killed(cs[0].Consumer) {
				t.Errorf("%s: %d calls, want 3 per attempting process", id, len(cs))
			}
			continue
		case rejected:
			if len(cs) < 1 || len(cs) > 2 {
				t.Errorf("%s: %d calls, want one (two if its caller was killed before its dead letter landed)", id, len(cs))
			}
			continue
		}
		var oks []itest.ReceiverCall
		for _, c := range cs {
			if c.Status/100 == 2 {
				oks = append(oks, c)
			}
		}
		if len(cs) > 0 && cs[0].Status == http.StatusServiceUnavailable {
			transient++
		}
		if len(oks) == 0 {
			t.Errorf("%s: never answered 2xx (%d calls)", id, len(cs))
			continue
		}
		if len(oks) > 1 {
			dups++
		}
		for _, c := range oks[:len(oks)-1] {
			if !killed(c.Consumer) {
				t.Errorf("%s: answered 2xx %d times, once by %s, which was not killed", id, len(oks), c.Consumer)
			}
		}
	}
	t.Logf("%d calls; %d orders failed once and retried; %d orders called again after their caller was killed", len(calls), transient, dups)
	if transient == 0 {
		t.Error("no order's first call failed: -fail-rate 0.05 was not exercised")
	}
	if dups == 0 {
		t.Error("no order was called again after its caller was SIGKILLed with calls held: the window was not exercised")
	}
	// The slow order's customer waits; its partition's other customers do not.
	if slowCall == nil {
		t.Fatalf("%s never called", slow)
	}
	passed := 0
	for _, cl := range calls {
		if cl.Consumer == slowCall.Consumer && cl.Partition == slowCall.Partition && cl.RecordKey != slowCall.RecordKey &&
			cl.Received.After(slowCall.Received) && cl.Replied.Before(slowCall.Replied) {
			passed++
		}
	}
	if passed == 0 {
		t.Errorf("no call of another customer of partition %d ran while %s's 2s call ran: the slow key held up its partition", slowCall.Partition, slow)
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
