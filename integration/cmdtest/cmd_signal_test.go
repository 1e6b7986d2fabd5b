package cmdtest_test

import (
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdSignalDuringStartup: a SIGTERM while run is still checking the
// servers (here a "broker" that accepts connections and never answers) ends
// it cleanly, exit 0, instead of killing it by the signal; nothing was held.
func TestCmdSignalDuringStartup(t *testing.T) {
	t.Parallel()
	addr := integration.Redis(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		for {
			select {
			case c := <-accepted:
				_ = c.Close()
			default:
				return
			}
		}
	})

	bin := itest.BuildShardpipe(t)
	p := itest.Start(t, "run", bin, "run", "--brokers", l.Addr().String(), "--topic", "orders", "--redis", addr,
		"--connect-timeout", "2m", "--log-format", "json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case c := <-accepted: // run is in its start-up checks, waiting on the broker
		accepted <- c
	case <-ctx.Done():
		t.Fatalf("run never dialed the broker\n%s", p.Output())
	}
	p.Signal(syscall.SIGTERM)
	if code := p.Wait(ctx); code != 0 {
		t.Fatalf("exit %d after SIGTERM during the start-up checks, want 0\n%s", code, p.Output())
	}
	if out := p.Output(); !strings.Contains(out, "interrupted before the pipeline started") {
		t.Errorf("no line saying it was interrupted before starting:\n%s", out)
	}
}
