package itest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/integration"
)

// PrivateRedis is a redis-server process of this test alone, with AOF and
// fsync on every write (docs/operating.md's production setting).
type PrivateRedis struct {
	Bin, Addr, Dir string
	Cmd            *exec.Cmd
	Exited         chan struct{} // closed when cmd has exited
	Out            bytes.Buffer
	// BindFailures counts starts that found the port taken; a test may
	// watch it to act after one.
	BindFailures atomic.Int64
}

func StartPrivateRedis(t *testing.T) *PrivateRedis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if integration.Required() {
			t.Fatalf("redis-server not found: %v", err)
		}
		t.Skipf("redis-server not found: %v", err)
	}
	r := &PrivateRedis{Bin: bin, Addr: integration.ClosedAddr(t), Dir: t.TempDir()}
	t.Cleanup(func() { r.Kill() })
	r.StartFirst(t)
	return r
}

// StartFirst starts the server on r.addr; when that port was taken since
// it was picked, it picks another, up to five times.
func (r *PrivateRedis) StartFirst(t *testing.T) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := r.Try()
		if err == nil {
			return
		}
		if !errors.Is(err, ErrPortTaken) || attempt == 5 {
			t.Fatalf("private redis-server on %s: %v", r.Addr, err)
		}
		t.Logf("private redis-server: %s was taken since it was picked; picking another port", r.Addr)
		r.Addr = integration.ClosedAddr(t)
	}
}

// Start starts the server again on the same port (its clients know it).
// A port taken meanwhile (a listener, an outgoing connection's local port)
// is waited for: the start is tried again until it binds, for up to a
// minute.
func (r *PrivateRedis) Start(t *testing.T) {
	t.Helper()
	if err := r.Restart(); err != nil {
		t.Fatalf("private redis-server on %s: %v", r.Addr, err)
	}
}

// Restart is start without the test, for any goroutine.
func (r *PrivateRedis) Restart() error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := r.Try()
		if err == nil || !errors.Is(err, ErrPortTaken) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond) // polls the port: no event says it is free
	}
}

// ErrPortTaken is a redis-server that could not bind its port.
var ErrPortTaken = errors.New("port taken")

// Try runs redis-server once and waits until it answers PING, or exits.
func (r *PrivateRedis) Try() error {
	port := r.Addr[strings.LastIndexByte(r.Addr, ':')+1:]
	r.Cmd = exec.Command(r.Bin, "--port", port, "--bind", "127.0.0.1", "--dir", r.Dir, "--save", "",
		"--appendonly", "yes", "--appendfsync", "always", "--daemonize", "no")
	r.Out.Reset()
	r.Cmd.Stdout, r.Cmd.Stderr = &r.Out, &r.Out
	if err := r.Cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	cmd, exited := r.Cmd, make(chan struct{})
	r.Exited = exited
	go func() { _ = cmd.Wait(); close(exited) }()
	// Short timeouts: whatever else holds the port may accept and not answer.
	c := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond,
		ReadTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for !r.Answers(c, cmd.Process.Pid) {
		select {
		case <-exited:
			r.Cmd = nil
			if strings.Contains(r.Out.String(), "Address already in use") {
				r.BindFailures.Add(1)
				return fmt.Errorf("%w: %s", ErrPortTaken, r.Addr)
			}
			return fmt.Errorf("redis-server exited:\n%s", r.Out.String())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer to PING within 20s:\n%s", r.Out.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval: no event to wait on
	}
	return nil
}

// Answers reports whether the server at r.addr is the process pid (not
// another one that holds the port).
func (r *PrivateRedis) Answers(c *redis.Client, pid int) bool {
	info, err := c.Info(context.Background(), "server").Result()
	return err == nil && strings.Contains(info, fmt.Sprintf("process_id:%d\r", pid))
}

// Kill SIGKILLs the server and waits for it to exit.
func (r *PrivateRedis) Kill() {
	if r.Cmd == nil || r.Cmd.Process == nil {
		return
	}
	_ = r.Cmd.Process.Signal(syscall.SIGKILL)
	<-r.Exited
	r.Cmd = nil
}
