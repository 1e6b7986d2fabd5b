package opshttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/opshttp"
	"github.com/shardpipe/shardpipe/pipeline"
)

// fakeSource is a Source with fixed answers.
type fakeSource struct {
	stats  []pipeline.PartitionStats
	err    error
	member string
	gen    int32
}

func (f fakeSource) Stats() []pipeline.PartitionStats { return f.stats }
func (f fakeSource) Err() error                       { return f.err }
func (f fakeSource) GroupMetadata() (string, int32)   { return f.member, f.gen }

func part(n int32) checkpoint.Partition { return checkpoint.Partition{Topic: "orders", Partition: n} }

// TestProbes: each readiness and liveness check fails for its own cause
// only, names it, and the HTTP answer is 200 with every check passing, else
// 503.
func TestProbes(t *testing.T) {
	mr := miniredis.RunT(t)
	up := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = up.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	down := redis.NewClient(&redis.Options{Addr: closed, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = down.Close() })

	held := pipeline.PartitionStats{Partition: part(0), Held: true, Epoch: 4, StableOffset: -1}
	joined := fakeSource{member: "m-1", gen: 4, stats: []pipeline.PartitionStats{held}}
	with := func(f func(*fakeSource)) fakeSource {
		s := joined
		s.stats = append([]pipeline.PartitionStats(nil), joined.stats...)
		f(&s)
		return s
	}
	tests := []struct {
		name      string
		src       fakeSource
		rdb       redis.UniversalClient
		readyFail []string // checks that fail, in order
		liveFail  []string
	}{
		{"healthy", joined, up, nil, nil},
		{"waiting for an assignment", with(func(s *fakeSource) { s.stats = nil }), up, nil, nil},
		{"not joined", with(func(s *fakeSource) { s.member = "" }), up, []string{"group"}, nil},
		{"redis down", joined, down, []string{"redis"}, nil},
		{"pipeline stopped", with(func(s *fakeSource) { s.err = errors.New("poison record") }), up, []string{"pipeline"}, []string{"pipeline"}},
		{"commits failing", with(func(s *fakeSource) { s.stats[0].CommitFailures, s.stats[0].LastError = 3, "broker down" }), up, []string{"commits"}, nil},
		{"commits failed twice", with(func(s *fakeSource) { s.stats[0].CommitFailures = 2 }), up, nil, nil},
		{"fenced", with(func(s *fakeSource) { s.stats[0].TermFenced = true }), up, []string{"fence"}, nil},
		{"fenced but no longer held", with(func(s *fakeSource) { s.stats[0].TermFenced, s.stats[0].Held = true, false }), up, nil, nil},
		{"wedged call", with(func(s *fakeSource) { s.stats[0].BusySince = time.Now().Add(-3 * time.Minute) }), up, nil, []string{"workers"}},
		{"long call within bound", with(func(s *fakeSource) { s.stats[0].BusySince = time.Now().Add(-time.Minute) }), up, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := opshttp.New(tt.src, opshttp.Redis(tt.rdb, "sp:health"))
			srv := httptest.NewServer(p.Handler())
			defer srv.Close()
			checkProbe(t, srv.URL+"/readyz", []string{"pipeline", "group", "redis", "commits", "fence"}, tt.readyFail)
			checkProbe(t, srv.URL+"/healthz", []string{"pipeline", "workers"}, tt.liveFail)
		})
	}
	if ttl := mr.TTL("sp:health"); ttl <= 0 || ttl > 10*time.Second {
		t.Errorf("readiness key TTL %v, want up to 10s", ttl)
	}
}

func checkProbe(t *testing.T, url string, names, failing []string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r opshttp.Report
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	want := http.StatusOK
	if len(failing) > 0 {
		want = http.StatusServiceUnavailable
	}
	if resp.StatusCode != want || r.OK != (len(failing) == 0) {
		t.Errorf("%s: %d ok=%v, want %d", url, resp.StatusCode, r.OK, want)
	}
	var gotNames, gotFail []string
	for _, c := range r.Checks {
		gotNames = append(gotNames, c.Name)
		if !c.OK {
			gotFail = append(gotFail, c.Name)
		}
		if c.Detail == "" {
			t.Errorf("%s: check %s has no detail", url, c.Name)
		}
	}
	if strings.Join(gotNames, ",") != strings.Join(names, ",") || strings.Join(gotFail, ",") != strings.Join(failing, ",") {
		t.Errorf("%s: checks %v failing %v, want %v failing %v\n%+v", url, gotNames, gotFail, names, failing, r.Checks)
	}
}

// TestReadyHonoursContext: a probe whose request ends does not wait out
// the Redis timeout.
func TestReadyHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	r := opshttp.New(fakeSource{member: "m"}, opshttp.Redis(rdb, "k")).Ready(ctx)
	if r.OK {
		t.Fatalf("ready with a canceled context: %+v", r)
	}
}
