package settings

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/internal/harness/recvtest"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestHTTPGuardedKeySpace: --effect http keeps its guard claims in run's
// key space: shared, a key seen on one topic is not called again from
// another; per-topic, each topic's key is called once, under
// <prefix><topic>:<key>.
func TestHTTPGuardedKeySpace(t *testing.T) {
	tests := []struct {
		perTopic bool
		calls    int
		keys     []string
	}{
		{false, 1, []string{"p:k"}},
		{true, 2, []string{"p:a:k", "p:b:k"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint("per-topic=", tc.perTopic), func(t *testing.T) {
			rc := recvtest.New(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			defer rdb.Close()
			u, _ := url.Parse(rc.Server.URL)
			l := Ledger{Spec: Spec{Prefix: "p:", TTL: time.Hour, PerTopic: tc.perTopic}}
			a, err := HTTP{URL: u, Timeout: time.Second}.Guarded(l, rdb, []string{"a", "b"}, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			for _, topic := range []string{"a", "b"} {
				res, err := a.Apply(context.Background(), []sink.Record{{Topic: topic, Key: []byte("k"), Value: []byte("v")}})
				if err != nil || len(res) != 1 || res[0].Err != nil {
					t.Fatalf("topic %s: %v %+v", topic, err, res)
				}
			}
			reqs, _ := rc.Calls()
			calls := len(reqs)
			if calls != tc.calls || !slices.Equal(mr.Keys(), tc.keys) {
				t.Errorf("%d calls, ledger keys %q; want %d and %q", calls, mr.Keys(), tc.calls, tc.keys)
			}
		})
	}
}

// TestHTTPGuardedFinishes: the applier of --effect http is a
// pipeline.Finisher in both key spaces, so a worker whose term ends with a
// batch of unknown outcome marks done the calls that were made (per topic,
// pipeline.ByTopic forwards Finish: TestWrappersFinish).
func TestHTTPGuardedFinishes(t *testing.T) {
	for _, perTopic := range []bool{false, true} {
		u, _ := url.Parse("http://127.0.0.1:1/")
		l := Ledger{Spec: Spec{Prefix: "p:", TTL: time.Hour, PerTopic: perTopic}}
		a, err := HTTP{URL: u, Timeout: time.Second}.Guarded(l, redis.NewClient(&redis.Options{}), []string{"a", "b"},
			slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := a.(pipeline.Finisher); !ok {
			t.Errorf("%s key space: the applier %T is not a pipeline.Finisher", l.KeySpace(), a)
		}
	}
}
