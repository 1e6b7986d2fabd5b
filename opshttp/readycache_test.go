package opshttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/opshttp"
)

// setCounter is a go-redis hook counting the SET commands the client sends.
type setCounter struct{ sets atomic.Int64 }

func (*setCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s *setCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "set" {
			s.sets.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (*setCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestReadyProbeWritesOncePerInterval: however many /readyz requests come
// within RedisInterval, at once or one after the other, Redis gets one SET
// and every answer is the same report; once the interval has passed, the
// next probe writes again.
func TestReadyProbeWritesOncePerInterval(t *testing.T) {
	tests := []struct {
		name       string
		interval   time.Duration
		concurrent int // requests at once, then
		sequential int // requests one after the other
		wantSets   int64
	}{
		{"a flood within the interval", time.Hour, 64, 16, 1},
		{"one after the other within the interval", time.Hour, 0, 16, 1},
		{"each after the interval", time.Nanosecond, 0, 8, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { _ = rdb.Close() })
			var sc setCounter
			rdb.AddHook(&sc)
			p := opshttp.New(fakeSource{member: "m-1", gen: 1}, opshttp.Redis(rdb, "sp:health"), opshttp.RedisInterval(tt.interval))
			srv := httptest.NewServer(p.Handler())
			t.Cleanup(srv.Close)
			var wg sync.WaitGroup
			for range tt.concurrent {
				wg.Go(func() {
					resp, err := http.Get(srv.URL + "/readyz")
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Errorf("/readyz in the flood: %s, want 200", resp.Status)
					}
				})
			}
			wg.Wait()
			for range tt.sequential {
				checkProbe(t, srv.URL+"/readyz", readyChecks, nil)
			}
			if got := sc.sets.Load(); got != tt.wantSets {
				t.Errorf("%d probes made %d SETs, want %d", tt.concurrent+tt.sequential, got, tt.wantSets)
			}
		})
	}
}

var readyChecks = []string{"pipeline", "group", "redis", "commits", "fence"}

// TestReadyProbeFailureCached: a failed write is the answer until the
// interval has passed too, so a flood against a down Redis costs one dial.
func TestReadyProbeFailureCached(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	var sc setCounter
	rdb.AddHook(&sc)
	mr.SetError("READONLY")
	p := opshttp.New(fakeSource{member: "m-1", gen: 1}, opshttp.Redis(rdb, "sp:health"), opshttp.RedisInterval(time.Hour))
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(srv.Close)
	for range 4 {
		checkProbe(t, srv.URL+"/readyz", readyChecks, []string{"redis"})
	}
	if got := sc.sets.Load(); got != 1 {
		t.Errorf("4 probes against a failing Redis made %d SETs, want 1", got)
	}
}
