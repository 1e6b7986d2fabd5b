package integration_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/integration"
)

// EnvValkeyServer names the valkey-server binary (scripts/services.sh env
// prints it once `scripts/services.sh fetch valkey` or `start` fetched it).
const EnvValkeyServer = "VALKEY_SERVER"

// valkeyBin returns the valkey-server binary: $VALKEY_SERVER, else the one
// scripts/services.sh fetched into the repository's .cache. Without one the
// test is skipped, or failed when integration is required.
func valkeyBin(t testing.TB) string {
	t.Helper()
	if v := os.Getenv(EnvValkeyServer); v != "" {
		return v
	}
	if m, _ := filepath.Glob(filepath.Join("..", ".cache", "valkey-*", "valkey-server")); len(m) > 0 {
		return m[len(m)-1]
	}
	msg := "valkey-server not found: set " + EnvValkeyServer + " or run 'scripts/services.sh fetch valkey' (make test does)"
	if integration.Required() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// redisBin returns Debian's redis-server (7.0 here: no WAITAOF).
func redisBin(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if integration.Required() {
			t.Fatalf("redis-server not found: %v", err)
		}
		t.Skipf("redis-server not found: %v", err)
	}
	return bin
}

// server is a redis-server or valkey-server process of one test, on a free
// loopback port, in a directory of its own; it is killed at cleanup.
type server struct {
	t    testing.TB
	addr string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	c    *redis.Client
}

func (s *server) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}

func (s *server) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// startServer runs bin with AOF on (appendfsync everysec unless args say
// otherwise) and no RDB snapshots, plus args, and waits for PING.
func startServer(t testing.TB, bin string, args ...string) *server {
	t.Helper()
	s := &server{t: t, addr: integration.ClosedAddr(t)}
	port := s.addr[strings.LastIndexByte(s.addr, ':')+1:]
	all := append([]string{"--port", port, "--bind", "127.0.0.1", "--dir", t.TempDir(), "--save", "",
		"--appendonly", "yes", "--appendfsync", "everysec", "--daemonize", "no"}, args...)
	s.cmd = exec.Command(bin, all...)
	s.cmd.Stdout, s.cmd.Stderr = s, s
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(s.kill)
	s.c = redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	t.Cleanup(func() { _ = s.c.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for s.c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("%s on %s did not answer PING:\n%s", filepath.Base(bin), s.addr, s.output())
		}
		time.Sleep(20 * time.Millisecond) // poll interval: no event to wait on
	}
	return s
}

// startReplica runs bin as a replica of primary and waits until the primary
// counts it as connected and in sync.
func startReplica(t testing.TB, bin string, primary *server, args ...string) *server {
	t.Helper()
	host, port, _ := strings.Cut(primary.addr, ":")
	r := startServer(t, bin, append([]string{"--replicaof", host, port}, args...)...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := primary.c.Info(context.Background(), "replication").Result()
		if err == nil && strings.Contains(info, "connected_slaves:1") && strings.Contains(info, "state=online") {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s never came online at %s: %v\n%s\nreplica log:\n%s", r.addr, primary.addr, err, info, r.output())
		}
		time.Sleep(20 * time.Millisecond) // poll interval: no event to wait on
	}
}

// signal sends sig (SIGSTOP, SIGCONT) to the server.
func (s *server) signal(sig syscall.Signal) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("signal %v to %s: %v", sig, s.addr, err)
	}
}

// config sets a server setting (CONFIG SET).
func (s *server) config(ctx context.Context, kv ...string) {
	s.t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := s.c.ConfigSet(ctx, kv[i], kv[i+1]).Err(); err != nil {
			s.t.Fatalf("CONFIG SET %s %q on %s: %v", kv[i], kv[i+1], s.addr, err)
		}
	}
}

func (s *server) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies only once continued
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

func (s *server) String() string { return fmt.Sprintf("server %s", s.addr) }
