package itest

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

// ValkeyBin returns the valkey-server binary: $VALKEY_SERVER, else the one
// scripts/services.sh fetched into the repository's .cache. Without one the
// test is skipped, or failed when integration is required.
func ValkeyBin(t testing.TB) string {
	t.Helper()
	if v := os.Getenv(EnvValkeyServer); v != "" {
		return v
	}
	if m, _ := filepath.Glob(filepath.Join(RepoRoot(t), ".cache", "valkey-*", "valkey-server")); len(m) > 0 {
		return m[len(m)-1]
	}
	msg := "valkey-server not found: set " + EnvValkeyServer + " or run 'scripts/services.sh fetch valkey' (make test does)"
	if integration.Required() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// RedisBin returns Debian's redis-server (7.0 here: no WAITAOF).
func RedisBin(t testing.TB) string {
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

// Server is a redis-server or valkey-server process of one test, on a free
// loopback port, in a directory of its own; it is killed at cleanup.
type Server struct {
	T    testing.TB
	Addr string
	Cmd  *exec.Cmd
	Mu   sync.Mutex
	Out  bytes.Buffer
	C    *redis.Client
}

func (s *Server) Write(p []byte) (int, error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Out.Write(p)
}

func (s *Server) Output() string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Out.String()
}

// StartServer runs bin with AOF on (appendfsync everysec unless args say
// otherwise) and no RDB snapshots, plus args, and waits for PING.
func StartServer(t testing.TB, bin string, args ...string) *Server {
	t.Helper()
	s := &Server{T: t, Addr: integration.ClosedAddr(t)}
	port := s.Addr[strings.LastIndexByte(s.Addr, ':')+1:]
	all := append([]string{"--port", port, "--bind", "127.0.0.1", "--dir", t.TempDir(), "--save", "",
		"--appendonly", "yes", "--appendfsync", "everysec", "--daemonize", "no"}, args...)
	s.Cmd = exec.Command(bin, all...)
	s.Cmd.Stdout, s.Cmd.Stderr = s, s
	if err := s.Cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(s.Kill)
	s.C = redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = s.C.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for s.C.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("%s on %s did not answer PING:\n%s", filepath.Base(bin), s.Addr, s.Output())
		}
		time.Sleep(20 * time.Millisecond) // poll interval: no event to wait on
	}
	return s
}

// StartReplica runs bin as a replica of primary and waits until the primary
// counts it as connected and in sync.
func StartReplica(t testing.TB, bin string, primary *Server, args ...string) *Server {
	t.Helper()
	host, port, _ := strings.Cut(primary.Addr, ":")
	r := StartServer(t, bin, append([]string{"--replicaof", host, port}, args...)...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := primary.C.Info(context.Background(), "replication").Result()
		if err == nil && strings.Contains(info, "connected_slaves:1") && strings.Contains(info, "state=online") {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s never came online at %s: %v\n%s\nreplica log:\n%s", r.Addr, primary.Addr, err, info, r.Output())
		}
		time.Sleep(20 * time.Millisecond) // poll interval: no event to wait on
	}
}

// Signal sends sig (SIGSTOP, SIGCONT) to the server.
func (s *Server) Signal(sig syscall.Signal) {
	s.T.Helper()
	if err := s.Cmd.Process.Signal(sig); err != nil {
		s.T.Fatalf("signal %v to %s: %v", sig, s.Addr, err)
	}
}

// Config sets a server setting (CONFIG SET).
func (s *Server) Config(ctx context.Context, kv ...string) {
	s.T.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := s.C.ConfigSet(ctx, kv[i], kv[i+1]).Err(); err != nil {
			s.T.Fatalf("CONFIG SET %s %q on %s: %v", kv[i], kv[i+1], s.Addr, err)
		}
	}
}

func (s *Server) Kill() {
	if s.Cmd == nil || s.Cmd.Process == nil {
		return
	}
	_ = s.Cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies only once continued
	_ = s.Cmd.Process.Signal(syscall.SIGKILL)
	_ = s.Cmd.Wait()
	s.Cmd = nil
}

func (s *Server) String() string { return fmt.Sprintf("server %s", s.Addr) }
