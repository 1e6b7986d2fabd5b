package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestProbeCommand: exit 0 and the body for a 200, 1 for a 503, 3 when
// nothing answers.
func TestProbeCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			_, _ = w.Write([]byte(`{"ok":true}`))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"ok":false}`))
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/readyz"
	_ = ln.Close()
	tests := []struct {
		url      string
		code     int
		stdout   string
		stderrHa string
	}{
		{srv.URL + "/readyz", 0, `{"ok":true}`, ""},
		{srv.URL + "/healthz", exitFailure, `{"ok":false}`, "503 Service Unavailable"},
		{closed, exitUnavailable, "", "probe:"},
	}
	for _, tt := range tests {
		code, out, stderr := call(t, nil, "probe", "--url", tt.url)
		if code != tt.code || out != tt.stdout || !strings.Contains(stderr, tt.stderrHa) {
			t.Errorf("probe %s: exit %d, stdout %q, stderr %q; want %d, %q, containing %q", tt.url, code, out, stderr, tt.code, tt.stdout, tt.stderrHa)
		}
	}
}

// TestMetricsAddrTaken: run and replay bind --metrics-addr before they
// connect; a taken address is exit 2 naming the flag and the address.
func TestMetricsAddrTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	for _, args := range [][]string{
		{"run", "--topic", "orders", "--group", "g", "--brokers", "127.0.0.1:1", "--redis", "127.0.0.1:1", "--metrics-addr", addr},
		{"replay", "--topic", "orders", "--id", "r1", "--from", "0", "--brokers", "127.0.0.1:1", "--redis", "127.0.0.1:1", "--metrics-addr", addr},
	} {
		code, _, stderr := call(t, nil, args...)
		if code != exitUsage || !strings.Contains(stderr, "--metrics-addr") || !strings.Contains(stderr, addr+": cannot listen there") {
			t.Errorf("%s: exit %d, stderr %q; want %d naming --metrics-addr %s", args[0], code, stderr, exitUsage, addr)
		}
	}
}
