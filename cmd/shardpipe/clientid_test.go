package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestStatusNamesShardpipeClients: a running member's client ID names
// shardpipe, its version and the host, and status shows it, so an operator
// can tell members apart (before: "client kgo").
func TestStatusNamesShardpipeClients(t *testing.T) {
	broker, redisAddr, _ := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "1"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	logs := &lineWaiter{hit: make(chan struct{}), match: func(l string) bool { return strings.Contains(l, "partitions assigned") }}
	done := make(chan int, 1)
	go func() {
		done <- execute(rctx, []string{"shardpipe", "run", "--brokers", broker, "--redis", redisAddr, "--topic", "orders",
			"--report-interval", "0"}, &bytes.Buffer{}, logs)
	}()
	select {
	case <-logs.hit:
	case code := <-done:
		t.Fatalf("run ended with exit %d:\n%s", code, logs)
	case <-ctx.Done():
		t.Fatalf("run never joined:\n%s", logs)
	}
	code, out, stderr := call(t, nil, "status", "--brokers", broker, "--group", "shardpipe", "--topic", "orders")
	stop()
	<-done
	host, _ := os.Hostname()
	if code != 0 || !strings.Contains(out, "client shardpipe/") || !strings.Contains(out, "@"+host) {
		t.Fatalf("status: exit %d, want a member whose client names shardpipe/VERSION@%s:\n%s%s", code, host, out, stderr)
	}
}
