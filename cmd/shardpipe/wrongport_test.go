package main

import (
	"net"
	"strings"
	"testing"
)

// TestWrongPortNamed: --brokers pointing at a port that answers but is no
// broker's client listener (a KRaft controller port closes the connection
// after the first request) is named as such: franz-go's own text asks "is
// SASL missing?", which sends a user configuring no SASL the wrong way.
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
				_, _ = c.Read(make([]byte, 512))
				_ = c.Close()
			}()
		}
	}()
	code, _, stderr := call(t, nil, "status", "--brokers", ln.Addr().String(), "--group", "g", "--connect-timeout", "3s")
	if code != exitUnavailable {
		t.Fatalf("exit %d, want %d:\n%s", code, exitUnavailable, stderr)
	}
	if strings.Contains(stderr, "is SASL missing") || !strings.Contains(stderr, "client listener") {
		t.Fatalf("stderr does not say the port may not be a broker's client listener:\n%s", stderr)
	}
}
