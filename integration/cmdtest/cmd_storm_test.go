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
// batch mode and with --max-in-flight. Each stops with exit 1 once the
// failures over the process pass --dlq-max-run, says the configuration is
// the likely cause, leaves the dead-letter topic empty and the group's
// offsets unmoved.
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
	for _, tc := range []struct {
		name  string
		args  []string
		calls bool // the receiver was called
	}{
		{name: "key typo", args: []string{"--key-from", "json:orderid"}},
		{name: "404 receiver", args: []string{"--key-from", "json:order_id", "--effect", "http", "--http-url", srv.URL + "/wrong"}, calls: true},
		{name: "404 receiver in flight", args: []string{"--key-from", "json:order_id", "--effect", "http", "--http-url", srv.URL + "/wrong",
			"--max-in-flight", "4"}, calls: true},
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
			if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			rdb := integration.NewRedisClient(t, addr)
			before := calls.Load()
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
			for _, want := range []string{"records failed for good with no success since over the pipeline's partitions, bound 20",
				"the configuration, not the data, is the likely cause", "nothing of the run was dead-lettered"} {
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
			for p, c := range itest.StatusJSON(ctx, t, bin, brokers, group, topic).Committed() {
				if c > 0 {
					t.Errorf("%s/%d committed at %d, want no offset moved", topic, p, c)
				}
			}
		})
	}
}
