package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestRunWarnsDeadLetterPartitions: run with a dead-letter topic of fewer
// partitions than its source starts (exactly once does not depend on the
// count) and warns once, naming both topics and counts, before it joins
// the group; with as many partitions it does not warn.
func TestRunWarnsDeadLetterPartitions(t *testing.T) {
	broker, redisAddr, _ := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "4", "--count", "1"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "orders.few"); err != nil {
		t.Fatal(err)
	}
	const warning = "dead-letter topic has another partition count than its source"
	for _, tc := range []struct {
		dlq  string
		warn bool
	}{{"orders.few", true}, {"orders.dlq", false}} {
		t.Run(tc.dlq, func(t *testing.T) {
			rctx, stop := context.WithCancel(ctx)
			defer stop()
			logs := &lineWaiter{hit: make(chan struct{}), match: func(l string) bool { return strings.Contains(l, "partitions assigned") }}
			done := make(chan int, 1)
			go func() {
				done <- execute(rctx, []string{"shardpipe", "run", "--brokers", broker, "--redis", redisAddr, "--topic", "orders",
					"--dlq-topic", tc.dlq, "--report-interval", "0"}, &bytes.Buffer{}, logs)
			}()
			select {
			case <-logs.hit:
			case code := <-done:
				t.Fatalf("run ended with exit %d:\n%s", code, logs)
			case <-ctx.Done():
				t.Fatalf("run never joined:\n%s", logs)
			}
			stop()
			if code := <-done; code != 0 {
				t.Fatalf("run: exit %d:\n%s", code, logs)
			}
			out := logs.String()
			warned := strings.Count(out, warning)
			if tc.warn && (warned != 1 || !strings.Contains(out, "topic=orders partitions=4 dlq_topic=orders.few dlq_partitions=2") ||
				strings.Index(out, warning) > strings.Index(out, "partitions assigned")) {
				t.Fatalf("want one warning naming orders (4) and orders.few (2) before joining:\n%s", out)
			}
			if !tc.warn && warned != 0 {
				t.Fatalf("warned with as many partitions:\n%s", out)
			}
		})
	}
}
