package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/shardpipe/shardpipe/integration"
)

// lineWriter keeps what is written and closes seen at the first write
// holding want.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Write(p); w.seen != nil && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestRedisWaitSaid: a Redis that refuses connections at start is waited
// for up to --connect-timeout, and the command says so at the first
// refused attempt (the address without its password), not only when the
// wait ends.
func TestRedisWaitSaid(t *testing.T) {
	broker, _, _ := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "1"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	dead := integration.ClosedAddr(t)
	want := "waiting for Redis at redis://u:xxxxx@" + dead + " up to 2s: "
	stderr := &lineWriter{want: want, seen: make(chan struct{})}
	seen := stderr.seen
	done := make(chan int, 1)
	go func() {
		done <- execute(context.Background(), []string{"shardpipe", "run", "--brokers", broker, "--redis", "redis://u:secret@" + dead,
			"--topic", "orders", "--connect-timeout", "2s"}, &bytes.Buffer{}, stderr)
	}()
	select {
	case <-seen:
	case code := <-done:
		t.Fatalf("exit %d before saying it waits for Redis (want %q):\n%s", code, want, stderr)
	}
	if code := <-done; code != exitUnavailable { // it kept retrying until --connect-timeout
		t.Fatalf("exit %d, want %d:\n%s", code, exitUnavailable, stderr)
	}
	if out := stderr.String(); strings.Count(out, "waiting for Redis") != 1 || strings.Contains(out, "secret") ||
		!strings.Contains(out, "PING failed") {
		t.Fatalf("want one waiting line without the password, then PING failed:\n%s", out)
	}
}
