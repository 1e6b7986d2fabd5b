package httpeffect_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/shardpipe/shardpipe/httpeffect"
	"github.com/shardpipe/shardpipe/internal/harness/recvtest"
	"github.com/shardpipe/shardpipe/sink"
)

func testEffect(t *testing.T, rawURL string, timeout time.Duration) *httpeffect.Effect {
	e, err := httpeffect.New(rawURL, httpeffect.Timeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestHTTPEffectRequest: one POST per call with the value as body, the
// business key as Idempotency-Key, the record's key, headers and position,
// and the caller's identity; calls reuse one connection.
func TestHTTPEffectRequest(t *testing.T) {
	rc := recvtest.New(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) })
	e := testEffect(t, rc.Server.URL+"/effects", 5*time.Second)
	r := &sink.Record{Topic: "orders", Partition: 3, Offset: 41, Epoch: 7, Member: "m-1", Key: []byte("order 42"),
		Value:   []byte(`{"order_id":"order 42"}`),
		Headers: []sink.Header{{Key: "trace", Value: []byte("abc")}, {Key: "trace", Value: []byte("def")}, {Key: "x y", Value: []byte("\n")}}}
	const calls = 20
	for range calls {
		if err := e.Do(context.Background(), "order 42", r); err != nil {
			t.Fatal(err)
		}
	}
	reqs, bodies := rc.Calls()
	if len(reqs) != calls {
		t.Fatalf("%d requests, want %d", len(reqs), calls)
	}
	if n := rc.Conns(); n != 1 {
		t.Errorf("%d connections for %d sequential calls, want 1 (kept alive)", n, calls)
	}
	req := reqs[0]
	host, _ := os.Hostname()
	want := map[string][]string{
		"Idempotency-Key":     {"order%2042"},
		"Kafka-Key":           {"order%2042"},
		"Kafka-Header-Trace":  {"abc", "def"},
		"Kafka-Header-X%20y":  {"%0A"},
		"Shardpipe-Topic":     {"orders"},
		"Shardpipe-Partition": {"3"},
		"Shardpipe-Offset":    {"41"},
		"Shardpipe-Epoch":     {"7"},
		"Shardpipe-Member":    {"m-1"},
		"Shardpipe-Consumer":  {host + "/" + strconv.Itoa(os.Getpid())},
		"Content-Type":        {"application/octet-stream"},
	}
	for k, v := range want {
		if got := req.Header.Values(k); strings.Join(got, ",") != strings.Join(v, ",") {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if req.Method != http.MethodPost || req.URL.Path != "/effects" || bodies[0] != string(r.Value) {
		t.Errorf("%s %s body %q, want POST /effects with the record value", req.Method, req.URL.Path, bodies[0])
	}
}

// TestHTTPEffectFailures: a status other than 2xx, a timeout and a refused
// connection are errors naming what happened; a keyless record sends no
// Kafka-Key.
func TestHTTPEffectFailures(t *testing.T) {
	rc := recvtest.New(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get(httpeffect.HeaderOffset) {
		case "1":
			http.Error(w, "card declined", http.StatusPaymentRequired)
		case "2":
			http.Error(w, "try later", http.StatusServiceUnavailable)
		case "3":
			<-r.Context().Done() // the caller's timeout ends it
		case "4":
			w.WriteHeader(http.StatusMultipleChoices)
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
	e := testEffect(t, rc.Server.URL, 200*time.Millisecond)
	tests := []struct {
		offset int64
		want   string // "" for success
	}{
		{0, ""},
		{1, `402 Payment Required: "card declined"`},
		{2, `503 Service Unavailable: "try later"`},
		{3, "context deadline exceeded"},
		{4, "300 Multiple Choices"},
	}
	for _, tc := range tests {
		err := e.Do(context.Background(), "k", &sink.Record{Topic: "t", Offset: tc.offset, Value: []byte("v")})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("offset %d: %v, want success", tc.offset, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("offset %d: %v, want an error containing %q", tc.offset, err, tc.want)
		}
	}
	if tc := tests[3]; !errors.Is(e.Do(context.Background(), "k", &sink.Record{Offset: tc.offset}), context.DeadlineExceeded) {
		t.Errorf("a timeout does not wrap context.DeadlineExceeded")
	}
	reqs, _ := rc.Calls()
	if got := reqs[0].Header.Values(httpeffect.HeaderKafkaKey); got != nil {
		t.Errorf("a record without a key sent Kafka-Key %q", got)
	}

	rc.Server.Close()
	secret := testEffect(t, "http://user:s3cret@"+rc.Server.Listener.Addr().String()+"/", time.Second)
	err := secret.Do(context.Background(), "k", &sink.Record{Value: []byte("v")})
	if err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("closed receiver: %v; want connection refused without the password", err)
	}
}

// TestHTTPEffectRejects: a 4xx other than 408 and 429 wraps
// sink.ErrRejected (no retry can succeed: the record is given up at once);
// 408, 429, 5xx and a refused connection do not (they are retried).
func TestHTTPEffectRejects(t *testing.T) {
	statuses := []struct {
		status   int
		rejected bool
	}{{400, true}, {402, true}, {404, true}, {409, true}, {422, true}, {408, false}, {429, false}, {500, false},
		{502, false}, {503, false}, {300, false}}
	rc := recvtest.New(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.Header.Get(httpeffect.HeaderOffset))
		w.WriteHeader(statuses[n].status)
	})
	e := testEffect(t, rc.Server.URL, time.Second)
	for i, tc := range statuses {
		err := e.Do(context.Background(), "k", &sink.Record{Offset: int64(i), Value: []byte("v")})
		if err == nil || errors.Is(err, sink.ErrRejected) != tc.rejected {
			t.Errorf("status %d: %v; want an error, wrapping sink.ErrRejected: %v", tc.status, err, tc.rejected)
		}
	}
	rc.Server.Close()
	err := e.Do(context.Background(), "k", &sink.Record{Value: []byte("v")})
	if err == nil || errors.Is(err, sink.ErrRejected) {
		t.Errorf("refused connection: %v; want an error to retry", err)
	}
}

// TestHTTPEffectCustomCA: with RootCAs the effect calls an https receiver
// whose certificate a private CA signed; without it the call fails.
func TestHTTPEffectCustomCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	e, err := httpeffect.New(srv.URL, httpeffect.RootCAs(pool))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Do(context.Background(), "k", &sink.Record{Value: []byte("v")}); err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	plain := testEffect(t, srv.URL, 10*time.Second)
	if err := plain.Do(context.Background(), "k", &sink.Record{Value: []byte("v")}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the CA: %v, want a certificate error", err)
	}
}

// TestNewRejects: New refuses what cannot be called, before any I/O.
func TestNewRejects(t *testing.T) {
	tests := []struct {
		url  string
		opts []httpeffect.Opt
		want string
	}{
		{"://x", nil, "not a valid URL"},
		{"ftp://h/x", nil, "want an absolute http:// or https:// URL"},
		{"/relative", nil, "want an absolute http:// or https:// URL"},
		{"http://u:s3cret@/x", nil, `"http://u:xxxxx@/x"`},
		{"http://h/x", []httpeffect.Opt{httpeffect.Timeout(0)}, "timeout 0s: must be positive"},
	}
	for _, tt := range tests {
		_, err := httpeffect.New(tt.url, tt.opts...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("New(%q): %v, want an error containing %q (no password)", tt.url, err, tt.want)
		}
	}
}

// TestHTTPEffectTraceparent: a call whose context holds a span sends the
// span as a W3C traceparent header; one without sends none.
func TestHTTPEffectTraceparent(t *testing.T) {
	rc := recvtest.New(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	e := testEffect(t, rc.Server.URL, 5*time.Second)
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	traced := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	r := &sink.Record{Topic: "orders", Key: []byte("k")}
	for _, ctx := range []context.Context{traced, context.Background()} {
		if err := e.Do(ctx, "k", r); err != nil {
			t.Fatal(err)
		}
	}
	reqs, _ := rc.Calls()
	want := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if got := reqs[0].Header.Get("traceparent"); got != want {
		t.Errorf("traced call: traceparent %q, want %q", got, want)
	}
	if got := reqs[1].Header.Get("traceparent"); got != "" {
		t.Errorf("untraced call: traceparent %q, want none", got)
	}
}
