package httpeffect_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/shardpipe/shardpipe/httpeffect"
	"github.com/shardpipe/shardpipe/sink"
)

// An Effect calls the receiver with the business key as Idempotency-Key. In
// a pipeline it runs in guard mode: pipeline.Guarded(guard, eff.Do).
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.Method, r.Header.Get(httpeffect.HeaderIdempotencyKey), r.Header.Get(httpeffect.HeaderOffset))
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	eff, err := httpeffect.New(srv.URL+"/charges", httpeffect.Timeout(5*time.Second))
	if err != nil {
		panic(err)
	}
	rec := &sink.Record{Topic: "orders", Partition: 0, Offset: 41, Key: []byte("order-42"), Value: []byte(`{"amount_cents":500}`)}
	fmt.Println(eff.Do(context.Background(), "order-42", rec))
	// Output:
	// POST order-42 41
	// <nil>
}
