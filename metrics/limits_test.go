package metrics_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardpipe/shardpipe/metrics"
)

// TestServeLimits: the operator's server closes a connection that holds it
// without finishing: a request whose headers never end (slowloris), a
// request whose body never ends, a kept-alive connection left idle. Each
// close is awaited (a read that ends), bounded generously above the limit.
func TestServeLimits(t *testing.T) {
	lim := metrics.Limits{ReadHeader: 200 * time.Millisecond, Read: 400 * time.Millisecond, Write: 2 * time.Second, Idle: 300 * time.Millisecond}
	tests := []struct {
		name     string
		send     string
		response bool // a response comes before the close
	}{
		{"headers never end", "GET /metrics HTTP/1.1\r\nHost: ops\r\nX-Slow: 1\r\n", false},
		{"body never ends", "POST /metrics HTTP/1.1\r\nHost: ops\r\nContent-Length: 100\r\n\r\nten bytes.", true},
		{"idle after a request", "GET /metrics HTTP/1.1\r\nHost: ops\r\n\r\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			_, done := metrics.ServeHandlerLimits(ctx, ln, prometheus.NewRegistry(), nil, lim, slog.New(slog.DiscardHandler))
			t.Cleanup(func() { cancel(); <-done })
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tc.send); err != nil {
				t.Fatal(err)
			}
			// Far above every limit: only a server without them waits this long.
			if err := c.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			if tc.response {
				resp, err := http.ReadResponse(br, nil)
				if errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("the server kept the connection open for 20s without a response (limits %+v)", lim)
				} else if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			if _, err := br.ReadByte(); errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the server kept the connection open for 20s (limits %+v)", lim)
			} else if err == nil {
				t.Fatalf("the server sent more on the connection")
			}
		})
	}
}

// TestDefaultLimits: every limit ServeHandler applies is set, each one
// above the one it contains.
func TestDefaultLimits(t *testing.T) {
	l := metrics.DefaultLimits()
	if l.ReadHeader <= 0 || l.Read < l.ReadHeader || l.Write < l.Read || l.Idle <= 0 {
		t.Errorf("DefaultLimits() = %+v: want each set, ReadHeader <= Read <= Write", l)
	}
}
