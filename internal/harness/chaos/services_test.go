package chaos

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestServicesPortTaken: a port picked free and taken before the server
// binds it does not end the run. At the start the services are started on
// new ports; at a restart (the port is fixed: clients know it) the start
// is tried again until the port is free. Redis stands in for both servers.
func TestServicesPortTaken(t *testing.T) {
	for _, bin := range []string{"redis-server", "redis-cli", "java"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("SHARDPIPE_REQUIRE_INTEGRATION") == "1" {
				t.Fatalf("scripts/services.sh needs %s: %v", bin, err)
			}
			t.Skipf("scripts/services.sh needs %s: %v", bin, err)
		}
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Kafka is never started here: its ports only need to be set.
	s := Services{Root: root, Dir: t.TempDir(), KafkaPort: 1, ControllerPort: 2}
	if err := s.PickPorts(); err != nil {
		t.Fatal(err)
	}
	first := s.RedisPort
	taken, err := net.Listen("tcp", s.Redis())
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	if err := s.StartPicking(ctx, t.Logf, "redis"); err != nil {
		t.Fatalf("start with the picked port taken: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background(), "redis") })
	if s.RedisPort == first {
		t.Fatalf("redis on %d, the port taken since it was picked", first)
	}
	ping := func() error {
		rdb := redis.NewClient(&redis.Options{Addr: s.Redis()})
		defer rdb.Close()
		return rdb.Ping(ctx).Err()
	}
	if err := ping(); err != nil {
		t.Fatal(err)
	}

	if err := s.Kill(ctx, "redis"); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", s.Redis())
	if err != nil {
		t.Fatalf("take redis's port after the kill: %v", err)
	}
	retried := make(chan struct{})
	var once sync.Once
	s.onRetry = func(error) { once.Do(func() { close(retried) }) }
	restarted := make(chan error, 1)
	go func() { restarted <- s.Restart(ctx, "redis") }()
	select {
	case <-retried:
	case err := <-restarted:
		t.Fatalf("restart on a taken port ended (%v) instead of waiting for it", err)
	}
	ln.Close()
	if err := <-restarted; err != nil {
		t.Fatalf("restart once the port was free: %v", err)
	}
	if err := ping(); err != nil {
		t.Fatal(err)
	}
}
