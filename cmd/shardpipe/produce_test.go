package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProduceDeliveryTimeout: brokers that stop answering produce requests
// fail the records after --delivery-timeout (exit 1) instead of retrying
// forever.
func TestProduceDeliveryTimeout(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return nil, errors.New("broker down"), true // closes the connection
	})
	start := time.Now()
	code, _, stderr := call(t, nil, "produce", "--brokers", c.ListenAddrs()[0], "--topic", "orders", "--count", "20",
		"--delivery-timeout", "1s")
	var lines []string // without the progress lines
	for _, l := range problemLines(stderr) {
		if strings.HasPrefix(l, "shardpipe: ") {
			lines = append(lines, l)
		}
	}
	const want = "not acknowledged within --delivery-timeout (SHARDPIPE_DELIVERY_TIMEOUT) 1s"
	if code != exitFailure || len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Fatalf("exit %d, lines %q; want exit 1 and one line containing %q", code, lines, want)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %v with --delivery-timeout 1s", d)
	}
}

// TestProduceRejectsDeliveryTimeout: the timeout must be positive.
func TestProduceRejectsDeliveryTimeout(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"zero", []string{"--delivery-timeout", "0s"}, nil, "--delivery-timeout (SHARDPIPE_DELIVERY_TIMEOUT) 0s: want 1ms to 1h"},
		{"env negative", nil, map[string]string{"SHARDPIPE_DELIVERY_TIMEOUT": "-1s"}, "--delivery-timeout (SHARDPIPE_DELIVERY_TIMEOUT) -1s: want 1ms to 1h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"produce", "--brokers", "127.0.0.1:1", "--topic", "o"}, tt.args...)
			code, _, stderr := call(t, tt.env, args...)
			if lines := problemLines(stderr); code != exitUsage || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("exit %d, lines %q; want exit 2 and one line containing %q", code, lines, tt.want)
			}
		})
	}
}

// TestProduceSecondSignal: the first SIGINT stops sending and waits for the
// records in flight; a second one kills the process at once, though the
// brokers never answer and --delivery-timeout is an hour. It runs the test
// binary as shardpipe (see TestMain).
func TestProduceSecondSignal(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sending := make(chan struct{})
	first := true
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if first {
			first = false
			close(sending)
		}
		return nil, nil, true // never answers
	})
	cmd := exec.Command(os.Args[0], "produce", "--brokers", c.ListenAddrs()[0], "--topic", "orders",
		"--count", "1000000", "--rate", "1000", "--delivery-timeout", "1h")
	cmd.Env = append(os.Environ(), runAsMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	interrupted := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		closed := false
		for sc.Scan() {
			if !closed && strings.Contains(sc.Text(), "interrupt again to quit at once") {
				closed = true
				close(interrupted)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		exited <- cmd.Wait()
	}()
	guard := time.NewTimer(30 * time.Second)
	defer guard.Stop()
	select {
	case <-sending:
	case err := <-exited:
		t.Fatalf("produce ended before sending: %v", err)
	case <-guard.C:
		_ = cmd.Process.Kill()
		t.Fatal("no produce request within 30s")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-interrupted:
	case err := <-exited:
		t.Fatalf("the first SIGINT ended produce (%v); it should wait for the records in flight", err)
	case <-guard.C:
		_ = cmd.Process.Kill()
		t.Fatal("no 'interrupt again' line within 30s of SIGINT")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("after the second SIGINT: %v, want death by the signal", err)
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
			t.Fatalf("after the second SIGINT: %v, want death by SIGINT", err)
		}
	case <-guard.C:
		_ = cmd.Process.Kill()
		t.Fatal("the second SIGINT did not kill produce within 30s")
	}
}

// TestProduceInterrupted: an interrupt (here the cancelled context a signal
// gives) stops sending and ends with one line counting the acknowledged
// records, exit 1; the records it cancelled are not reported as failures.
func TestProduceInterrupted(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sending := make(chan struct{})
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.DropControl() // observe the first request only; the cluster answers it
		close(sending)
		return nil, nil, false
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, []string{"shardpipe", "produce", "--brokers", c.ListenAddrs()[0], "--topic", "orders",
			"--count", "1000000", "--rate", "2000"}, io.Discard, &stderr)
	}()
	select {
	case <-sending:
	case code := <-done:
		t.Fatalf("produce ended before sending: exit %d:\n%s", code, stderr.String())
	}
	cancel()
	code := <-done
	var lines []string
	for _, l := range problemLines(stderr.String()) {
		if strings.HasPrefix(l, "shardpipe: ") {
			lines = append(lines, l)
		}
	}
	if code != exitFailure || len(lines) != 1 || !strings.Contains(lines[0], "interrupted after ") {
		t.Fatalf("exit %d, lines %q; want exit 1 and one 'interrupted after' line:\n%s", code, lines, stderr.String())
	}
	if !strings.Contains(stderr.String(), "produce: interrupted: no more records are sent") {
		t.Fatalf("no line saying the interrupt was seen:\n%s", stderr.String())
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// failWriter fails every write, as a closed pipe does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// TestStatusWriteFailure: status whose output cannot be written (a closed
// pipe) fails while running: exit 1, not a usage error.
func TestStatusWriteFailure(t *testing.T) {
	broker, _, _ := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "5"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	commitOffset(t, broker, "g", "orders", 3)
	for _, args := range [][]string{{"--json"}, {}} {
		t.Run(strings.Join(append([]string{"status"}, args...), " "), func(t *testing.T) {
			var stderr strings.Builder
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			code := execute(ctx, append([]string{"shardpipe", "status", "--brokers", broker, "--group", "g"}, args...), failWriter{}, &stderr)
			lines := problemLines(stderr.String())
			if code != exitFailure || len(lines) != 1 || !strings.Contains(lines[0], "write status: broken pipe") {
				t.Fatalf("exit %d, lines %q; want exit 1 and one line about the write", code, lines)
			}
		})
	}
}

// commitOffset commits offset off of topic's partition 0 for group, which
// creates the group when it does not exist.
func commitOffset(t *testing.T, broker, group, topic string, off int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var offs kadm.Offsets
	offs.AddOffset(topic, 0, off, -1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CommitOffsets(ctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit offset %d for group %s: %v", off, group, err)
	}
}
