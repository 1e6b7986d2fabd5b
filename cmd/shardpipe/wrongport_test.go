package main

import (
	"net"
	"strings"
	"testing"
)

// TestWrongPortNamed: --brokers pointing at a port that answers but is no
// broker's client listener (a KRaft controller port closes the connection
// after the first request) is named as such while TLS is off: franz-go's
// own text asks "is SASL missing?", and calling it a failed TLS handshake
// sends a user who configured neither the wrong way. With TLS on, a
// listener that hangs up during the handshake is a TLS mismatch, and the
// controller is not named.
func TestWrongPortNamed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { // read the first request, then hang up, as a controller listener does
				_, _ = c.Read(make([]byte, 64<<10)) // all of it (a TLS ClientHello too), so the close is a FIN, not a reset
				_ = c.Close()
			}()
		}
	}()
	tests := []struct {
		name      string
		args      []string
		want, not []string
	}{
		{"TLS off", nil, []string{"client listener", "TLS is off", "KRaft controller"}, []string{"is SASL missing", "TLS handshake"}},
		{"TLS on", []string{"--kafka-tls"}, []string{"TLS handshake failed"}, []string{"controller", "TLS is off"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"status", "--brokers", ln.Addr().String(), "--group", "g", "--connect-timeout", "3s"}, tt.args...)
			code, _, stderr := call(t, nil, args...)
			if code != exitUnavailable {
				t.Fatalf("exit %d, want %d:\n%s", code, exitUnavailable, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(stderr, n) {
					t.Errorf("stderr says %q:\n%s", n, stderr)
				}
			}
		})
	}
}
