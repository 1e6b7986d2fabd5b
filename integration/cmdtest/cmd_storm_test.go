package cmdtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdStormDeadLettersNothing runs the binary on the real broker and
// Redis with a configuration no record satisfies: a mistyped --key-from, and
// a receiver that answers 404 to every call (a wrong --http-url path), in
// batch mode and with --max-in-flight; and with a receiver that answers the
// first half of the orders and refuses the rest (a storm that begins after
// successes). Each stops with exit 1 once the failures over the process
// pass --dlq-max-run, says what the likely cause is, leaves the
// dead-letter topic empty and no partition's offset past its first failure
// (none moved when nothing succeeded).
func TestCmdStormDeadLettersNothing(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		http.NotFound(w, nil)
	}))
	defer srv.Close()
	// late answers the orders below order-100 and refuses every later one
	// with 404: a storm that begins after successes (the receiver's path
	// moved mid-stream).
	var lateOK atomic.Int64
	late := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Idempotency-Key") >= "order-100" {
			http.NotFound(w, nil)
			return
		}
		lateOK.Add(1)
	}))
	defer late.Close()
	for _, tc := range []struct {
		name  string
		args  []string
		calls bool // the receiver was called
		after bool // records succeeded before the run of failures
	}{
		{name: "key typo", args: []string{"--key-from", "json:orderid"}},
		{name: "404 receiver", args: []string{"--key-from", "json:order_id", "--effect", "http", "--http-url", srv.URL + "/wrong"}, calls: true},
		{name: "404 receiver in flight", args: []string{"--key-from", "json:order_id", "--effect", "http", "--http-url", srv.URL + "/wrong",
			"--max-in-flight", "4"}, calls: true},
		{name: "404 after successes", args: []string{"--key-from", "json:order_id", "--effect", "http", "--http-url", late.URL,
			"--max-in-flight", "0"}, calls: true, after: true},
		{name: "404 after successes in flight", args: []string{"--key-from", "json:order_id", "--effect", "http", "--http-url", late.URL,
			"--max-in-flight", "4"}, calls: true, after: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			topic := integration.CreateTopic(t, brokers, 4)
			dlq := integration.CreateDeadLetterTopic(t, brokers, topic, 4)
			group := integration.Group(t)
			prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
			var recs []*kgo.Record
			for i := range 200 {
				id := fmt.Sprintf("order-%03d", i)
				recs = append(recs, &kgo.Record{Key: []byte(id), Value: fmt.Appendf(nil, `{"order_id":%q,"amount_cents":1}`, id)})
			}
			produced := prod.ProduceSync(ctx, recs...)
			if err := produced.FirstErr(); err != nil {
				t.Fatal(err)
			}
			// firstBad: each partition's first record the late receiver
			// refuses; its records below it it answers.
			firstBad := map[int32]int64{}
			for _, p := range produced {
				if string(p.Record.Key) >= "order-100" {
					if o, ok := firstBad[p.Record.Partition]; !ok || p.Record.Offset < o {
						firstBad[p.Record.Partition] = p.Record.Offset
					}
				}
			}
			rdb := integration.NewRedisClient(t, addr)
			before, okStart := calls.Load(), lateOK.Load()
			args := append([]string{"run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
				"--redis", addr, "--ledger-prefix", integration.RedisPrefix(t, rdb), "--poison-attempts", "1",
				"--commit-every", "1", "--dlq-max-run", "20", "--log-format", "json"}, tc.args...)
			run := itest.Start(t, "run", bin, args...)
			if code := run.Wait(ctx); code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, run.Output())
			}
			out := run.Output()
			// 21 or more: the partitions fail at once, and the first to stop the
			// run may have counted past the one that exceeded the bound
			wants := []string{"records failed for good with no success since over the pipeline's partitions, bound 20",
				"the configuration, not the data, is the likely cause", "nothing of the run was dead-lettered"}
			okBefore := lateOK.Load() - okStart
			if tc.after {
				wants[1] = "records of the partition succeeded before the run of failures began"
			}
			for _, want := range wants {
				if !strings.Contains(out, want) {
					t.Fatalf("output does not say %q:\n%s", want, out)
				}
			}
			if got := calls.Load() - before; tc.calls != (got > 0) {
				t.Fatalf("receiver called %d times; want calls: %v", got, tc.calls)
			}
			ends, err := integration.NewAdmin(t, brokers).ListEndOffsets(ctx, dlq)
			if err != nil {
				t.Fatal(err)
			}
			ends.Each(func(o kadm.ListedOffset) {
				if o.Offset != 0 {
					t.Errorf("%s/%d holds %d dead letters, want none", dlq, o.Partition, o.Offset)
				}
			})
			if tc.after && okBefore == 0 {
				t.Fatalf("the receiver answered no call: the storm did not follow successes")
			}
			for p, c := range itest.StatusJSON(ctx, t, bin, brokers, group, topic).Committed() {
				switch {
				case tc.after && c > firstBad[p]:
					t.Errorf("%s/%d committed at %d, past the run's first failure at %d", topic, p, c, firstBad[p])
				case !tc.after && c > 0:
					t.Errorf("%s/%d committed at %d, want no offset moved", topic, p, c)
				}
			}
		})
	}
}
