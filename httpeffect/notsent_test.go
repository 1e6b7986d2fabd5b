package httpeffect_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/recvtest"
	"github.com/shardpipe/shardpipe/sink"
)

// TestHTTPEffectSaysWhenNothingWasSent: a call that certainly sent nothing
// (its context ended before a connection was had, the connection refused)
// wraps sink.ErrNotApplied, so the guard releases the claim and the record
// runs again instead of being taken as done; a call that reached the
// receiver and got no answer does not (it may have landed), nor does a
// reply the receiver refused.
func TestHTTPEffectSaysWhenNothingWasSent(t *testing.T) {
	arrived := make(chan struct{}, 1)
	hang := recvtest.New(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	refuse := recvtest.New(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/charge"
	l.Close()
	r := sink.Record{Topic: "orders", Partition: 1, Offset: 7, Value: []byte(`{"order_id":"o1"}`)}
	for _, tc := range []struct {
		name       string
		url        string
		ctx        func(t *testing.T) context.Context
		notApplied bool
	}{
		{name: "context ended before the call", url: hang.Server.URL, notApplied: true, ctx: func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
		{name: "connection refused", url: closed, notApplied: true, ctx: func(*testing.T) context.Context { return context.Background() }},
		{name: "sent, no answer before the context ended", url: hang.Server.URL, ctx: func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-arrived
				cancel()
			}()
			t.Cleanup(cancel)
			return ctx
		}},
		{name: "receiver answered 503", url: refuse.Server.URL, ctx: func(*testing.T) context.Context { return context.Background() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs, _ := hang.Calls()
			before := len(reqs)
			err := testEffect(t, tc.url, 10*time.Second).Do(tc.ctx(t), "o1", &r)
			if err == nil {
				t.Fatal("Do succeeded")
			}
			if got := errors.Is(err, sink.ErrNotApplied); got != tc.notApplied {
				t.Errorf("Do = %v: wraps sink.ErrNotApplied %v, want %v", err, got, tc.notApplied)
			}
			if tc.notApplied && tc.url == hang.Server.URL {
				reqs, _ := hang.Calls()
				n := len(reqs) - before
				if n != 0 {
					t.Errorf("the receiver saw %d requests of a call said not sent", n)
				}
			}
		})
	}
}
