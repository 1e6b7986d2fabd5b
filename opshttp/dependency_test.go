package opshttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/opshttp"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestReadyDependency: readiness fails, naming the check and the server,
// while a Dependency's ping fails, passes once it answers, and pings the
// server once per RedisInterval however many probes come.
func TestReadyDependency(t *testing.T) {
	var down atomic.Bool
	var pings atomic.Int64
	ping := func(context.Context) error {
		pings.Add(1)
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	}
	for _, tt := range []struct {
		name     string
		down     bool
		interval time.Duration
		probes   int
		ok       bool
		detail   string
		pings    int64
	}{
		{"answers", false, time.Hour, 5, true, "PostgreSQL at db:5432/orders answered in", 1},
		{"down", true, time.Hour, 5, false, "PostgreSQL at db:5432/orders did not answer: connection refused", 1},
		{"down, each probe after the interval", true, time.Nanosecond, 3, false, "did not answer", 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			down.Store(tt.down)
			pings.Store(0)
			p := opshttp.New(fakeSource{member: "m-1", gen: 1}, opshttp.RedisInterval(tt.interval),
				opshttp.Dependency("postgres", "PostgreSQL at db:5432/orders", ping))
			var r opshttp.Report
			for range tt.probes {
				r = p.Ready(context.Background())
			}
			var dep *opshttp.Check
			for i := range r.Checks {
				if r.Checks[i].Name == "postgres" {
					dep = &r.Checks[i]
				}
			}
			switch {
			case dep == nil:
				t.Fatalf("no postgres check in %+v", r.Checks)
			case r.OK != tt.ok || dep.OK != tt.ok || !strings.Contains(dep.Detail, tt.detail):
				t.Errorf("ready %v, postgres check %+v; want ok %v naming %q", r.OK, *dep, tt.ok, tt.detail)
			}
			if got := pings.Load(); got != tt.pings {
				t.Errorf("%d probes pinged %d times, want %d", tt.probes, got, tt.pings)
			}
		})
	}
}

// TestOpsStarting: before Start, an Ops that was told it is starting
// answers /readyz 503 with the one failed check "start" naming what it
// waits for and /healthz 200; after Start, the pipeline's probes answer.
func TestOpsStarting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ops := opshttp.NewOps(ln, nil)
	t.Cleanup(ops.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ops.Starting("starting: waiting for PostgreSQL", log)
	base := "http://" + ln.Addr().String()
	get := func(path string) (int, opshttp.Report) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r opshttp.Report
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp.StatusCode, r
	}
	if code, r := get("/readyz"); code != http.StatusServiceUnavailable || r.OK || len(r.Checks) != 1 ||
		r.Checks[0].Name != "start" || r.Checks[0].Detail != "starting: waiting for PostgreSQL" {
		t.Errorf("readyz while starting: %d %+v; want 503 with one failed check start", code, r)
	}
	if code, r := get("/healthz"); code != http.StatusOK || !r.OK {
		t.Errorf("healthz while starting: %d %+v; want 200", code, r)
	}
	ops.Start(func() []pipeline.PartitionStats { return nil }, opshttp.New(fakeSource{member: "m-1", gen: 1}), log)
	if code, r := get("/readyz"); code != http.StatusOK || !r.OK || len(r.Checks) < 2 {
		t.Errorf("readyz after Start: %d %+v; want the pipeline's checks, passing", code, r)
	}
}
