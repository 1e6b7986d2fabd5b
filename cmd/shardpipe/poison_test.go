package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestRunPoison: a record without a business key stops run with exit 1 and a
// line naming its partition, offset and cause under --on-poison stop, and goes
// to orders.dlq under --on-poison dlq, counted in the summary.
func TestRunPoison(t *testing.T) {
	for _, mode := range []string{"stop", "dlq"} {
		t.Run(mode, func(t *testing.T) {
			broker, redisAddr, _ := fakes(t)
			if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "0"); code != 0 {
				t.Fatalf("produce: exit %d: %s", code, stderr)
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.DefaultProduceTopic("orders"))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i := range 5 {
				key := fmt.Appendf(nil, "order-%d", i)
				if i == 2 {
					key = nil
				}
				if err := cl.ProduceSync(ctx, &kgo.Record{Key: key, Value: []byte("{}")}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"shardpipe", "run", "--brokers", broker, "--redis", redisAddr, "--topic", "orders",
				"--on-poison", mode, "--poison-attempts", "2", "--commit-every", "1", "--report-interval", "0"}
			var stderr bytes.Buffer
			if mode == "stop" {
				code := execute(ctx, args, &bytes.Buffer{}, &stderr)
				lines := problemLines(stderr.String())
				want := "orders/0 epoch "
				if code != exitFailure || len(lines) == 0 || !strings.Contains(lines[len(lines)-1], want) ||
					!strings.Contains(lines[len(lines)-1], "offset 2 after 2 attempts: pipeline: poison record: sink: no business key") {
					t.Fatalf("exit %d, last line of %q; want exit 1 naming orders/0 offset 2 and the cause", code, lines)
				}
				return
			}
			rctx, stop := context.WithCancel(ctx)
			done := make(chan int, 1)
			logs := &lineWaiter{hit: make(chan struct{}), match: func(l string) bool { return strings.Contains(l, "poison record dead-lettered") }}
			go func() { done <- execute(rctx, args, &bytes.Buffer{}, logs) }()
			select {
			case <-logs.hit:
			case code := <-done:
				t.Fatalf("run ended with exit %d:\n%s", code, logs)
			case <-ctx.Done():
				t.Fatalf("no dead letter:\n%s", logs)
			}
			stop()
			if code := <-done; code != 0 {
				t.Fatalf("run: exit %d:\n%s", code, logs)
			}
			if !strings.Contains(logs.String(), "msg=summary attempts=5 applied=4 suppressed=0 dead_lettered=1") {
				t.Fatalf("no summary with dead_lettered=1:\n%s", logs)
			}
			ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "orders.dlq")
			if err != nil {
				t.Fatal(err)
			}
			if end, _ := ends.Lookup("orders.dlq", 0); end.Offset != 1 {
				t.Fatalf("orders.dlq ends at %d, want 1 record", end.Offset)
			}
		})
	}
}
