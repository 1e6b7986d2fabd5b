package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

func TestHeaderEncoding(t *testing.T) {
	tests := []struct {
		in        string
		value     string // headerValue
		name      string // headerName
		roundTrip bool
	}{
		{"order-42", "order-42", "order-42", true},
		{"0d9b7c1e-3f2a-4d5b-9e8f-112233445566", "0d9b7c1e-3f2a-4d5b-9e8f-112233445566", "0d9b7c1e-3f2a-4d5b-9e8f-112233445566", true},
		{"a b", "a%20b", "a%20b", true},
		{"50%", "50%25", "50%25", true},
		{"line\r\nInjected: 1", "line%0D%0AInjected:%201", "line%0D%0AInjected%3A%201", true},
		{"caf\xc3\xa9", "caf%C3%A9", "caf%C3%A9", true},
		{"\x00\xff", "%00%FF", "%00%FF", true},
		{"trace.id(x)", "trace.id(x)", "trace.id%28x%29", true},
	}
	for _, tc := range tests {
		if got := headerValue([]byte(tc.in)); got != tc.value {
			t.Errorf("headerValue(%q) = %q, want %q", tc.in, got, tc.value)
		}
		if got := headerName(tc.in); got != tc.name {
			t.Errorf("headerName(%q) = %q, want %q", tc.in, got, tc.name)
		}
		for _, enc := range []string{tc.value, tc.name} {
			if back, err := url.PathUnescape(enc); err != nil || back != tc.in {
				t.Errorf("url.PathUnescape(%q) = %q, %v; want %q", enc, back, err, tc.in)
			}
		}
	}
}

// receiver is an httptest server that records each request and counts
// the connections it accepted.
type receiver struct {
	srv   *httptest.Server
	conns atomic.Int64
	mu    sync.Mutex
	reqs  []*http.Request
	body  []string
	reply func(w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{reply: reply}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs, rc.body = append(rc.reqs, r), append(rc.body, string(b))
		rc.mu.Unlock()
		rc.reply(w, r)
	}))
	rc.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rc.conns.Add(1)
		}
	}
	rc.srv.Start()
	t.Cleanup(rc.srv.Close)
	return rc
}

func testEffect(t *testing.T, rawURL string, timeout time.Duration) *httpEffect {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return newHTTPEffect(httpConfig{url: u, timeout: timeout})
}

// TestHTTPEffectRequest: one POST per call with the value as body, the
// business key as Idempotency-Key, the record's key, headers and position,
// and the caller's identity; calls reuse one connection.
func TestHTTPEffectRequest(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) })
	e := testEffect(t, rc.srv.URL+"/effects", 5*time.Second)
	r := &sink.Record{Topic: "orders", Partition: 3, Offset: 41, Epoch: 7, Member: "m-1", Key: []byte("order 42"),
		Value:   []byte(`{"order_id":"order 42"}`),
		Headers: []sink.Header{{Key: "trace", Value: []byte("abc")}, {Key: "trace", Value: []byte("def")}, {Key: "x y", Value: []byte("\n")}}}
	const calls = 20
	for range calls {
		if err := e.do(context.Background(), "order 42", r); err != nil {
			t.Fatal(err)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.reqs) != calls {
		t.Fatalf("%d requests, want %d", len(rc.reqs), calls)
	}
	if n := rc.conns.Load(); n != 1 {
		t.Errorf("%d connections for %d sequential calls, want 1 (kept alive)", n, calls)
	}
	req := rc.reqs[0]
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
	if req.Method != http.MethodPost || req.URL.Path != "/effects" || rc.body[0] != string(r.Value) {
		t.Errorf("%s %s body %q, want POST /effects with the record value", req.Method, req.URL.Path, rc.body[0])
	}
}

// TestHTTPEffectFailures: a status other than 2xx, a timeout and a refused
// connection are errors naming what happened; a keyless record sends no
// Kafka-Key.
func TestHTTPEffectFailures(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get(hdrOffset) {
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
	e := testEffect(t, rc.srv.URL, 200*time.Millisecond)
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
		err := e.do(context.Background(), "k", &sink.Record{Topic: "t", Offset: tc.offset, Value: []byte("v")})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("offset %d: %v, want success", tc.offset, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("offset %d: %v, want an error containing %q", tc.offset, err, tc.want)
		}
	}
	if tc := tests[3]; !errors.Is(e.do(context.Background(), "k", &sink.Record{Offset: tc.offset}), context.DeadlineExceeded) {
		t.Errorf("a timeout does not wrap context.DeadlineExceeded")
	}
	rc.mu.Lock()
	if got := rc.reqs[0].Header.Values(hdrKafkaKey); got != nil {
		t.Errorf("a record without a key sent Kafka-Key %q", got)
	}
	rc.mu.Unlock()

	rc.srv.Close()
	secret := testEffect(t, "http://user:s3cret@"+rc.srv.Listener.Addr().String()+"/", time.Second)
	err := secret.do(context.Background(), "k", &sink.Record{Value: []byte("v")})
	if err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("closed receiver: %v; want connection refused without the password", err)
	}
}

// TestHTTPGuardedKeySpace: --effect http keeps its guard claims in run's
// key space: shared, a key seen on one topic is not called again from
// another; per-topic, each topic's key is called once, under
// <prefix><topic>:<key>.
func TestHTTPGuardedKeySpace(t *testing.T) {
	tests := []struct {
		space string
		calls int
		keys  []string
	}{
		{keySpaceShared, 1, []string{"p:k"}},
		{keySpacePerTopic, 2, []string{"p:a:k", "p:b:k"}},
	}
	for _, tc := range tests {
		t.Run(tc.space, func(t *testing.T) {
			rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			defer rdb.Close()
			u, _ := url.Parse(rc.srv.URL)
			lc := ledgerConfig{prefix: "p:", ttl: time.Hour, keySpace: tc.space}
			a, err := newHTTPGuarded(lc, httpConfig{url: u, timeout: time.Second}, []string{"a", "b"}, rdb, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			for _, topic := range []string{"a", "b"} {
				res, err := a.Apply(context.Background(), []sink.Record{{Topic: topic, Key: []byte("k"), Value: []byte("v")}})
				if err != nil || len(res) != 1 || res[0].Err != nil {
					t.Fatalf("topic %s: %v %+v", topic, err, res)
				}
			}
			rc.mu.Lock()
			calls := len(rc.reqs)
			rc.mu.Unlock()
			if calls != tc.calls || !slices.Equal(mr.Keys(), tc.keys) {
				t.Errorf("%d calls, ledger keys %q; want %d and %q", calls, mr.Keys(), tc.calls, tc.keys)
			}
		})
	}
}

// finishRecorder is an Applier and pipeline.Finisher that records the
// batches it was asked to finish.
type finishRecorder struct {
	okApplier
	finished [][]sink.Record
}

func (f *finishRecorder) Finish(_ context.Context, b []sink.Record) (int, int, error) {
	f.finished = append(f.finished, b)
	return len(b), 0, nil
}

// TestHTTPGuardedFinishes: the applier of --effect http is a
// pipeline.Finisher in both key spaces, so a worker whose term ends with a
// batch of unknown outcome marks done the calls that were made; per topic,
// Finish goes to the batch's topic's Guarded.
func TestHTTPGuardedFinishes(t *testing.T) {
	for _, space := range []string{keySpaceShared, keySpacePerTopic} {
		u, _ := url.Parse("http://127.0.0.1:1/")
		lc := ledgerConfig{prefix: "p:", ttl: time.Hour, keySpace: space}
		a, err := newHTTPGuarded(lc, httpConfig{url: u, timeout: time.Second}, []string{"a", "b"}, redis.NewClient(&redis.Options{}),
			slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := a.(pipeline.Finisher); !ok {
			t.Errorf("%s key space: the applier %T is not a pipeline.Finisher", space, a)
		}
	}
	fa := &finishRecorder{}
	ls := topicLedgers{"a": fa, "b": okApplier{}}
	batch := []sink.Record{{Topic: "a", Offset: 7}}
	if n, left, err := ls.Finish(context.Background(), batch); n != 1 || left != 0 || err != nil || len(fa.finished) != 1 || fa.finished[0][0].Offset != 7 {
		t.Errorf("Finish of topic a's batch = %d, %d, %v; forwarded %v", n, left, err, fa.finished)
	}
	if n, left, err := ls.Finish(context.Background(), []sink.Record{{Topic: "b"}}); n != 0 || left != 0 || err != nil {
		t.Errorf("Finish of topic b's batch (no Finisher) = %d, %d, %v; want nothing", n, left, err)
	}
	if _, _, err := ls.Finish(context.Background(), []sink.Record{{Topic: "c"}}); err == nil {
		t.Error("Finish of a topic without a key space: no error")
	}
}

// okApplier applies every record.
type okApplier struct{}

func (okApplier) Apply(_ context.Context, b []sink.Record) ([]sink.Result, error) {
	return make([]sink.Result, len(b)), nil
}
