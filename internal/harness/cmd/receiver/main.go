// Command receiver is the external system of the chaos run's guard pass:
// an HTTP server that `shardpipe run --effect http` POSTs each record to,
// and that records every call, so the independent checker can count how
// many times each order's effect ran, and by whom.
//
//	go run ./internal/harness/cmd/receiver -calls calls.jsonl -addr-file addr
//
// It listens on a free 127.0.0.1 port, writes its address (host:port) to
// -addr-file once it accepts connections, and answers every POST with 200.
// Each call is one JSON line in -calls, written when the reply has been
// sent:
//
//	{"key":"order-1","record_key":"customer-7","topic":"t","partition":3,"offset":41,
//	 "consumer":"host/123","received":"2026-01-01T00:00:00.1Z",
//	 "replied":"2026-01-01T00:00:00.1Z","status":200}
//
// key is the Idempotency-Key, topic/partition/offset the Shardpipe-Topic,
// -Partition and -Offset headers, consumer the Shardpipe-Consumer header
// (host/pid of the calling process); percent-encoded values are decoded.
//
// record_key is the Kafka-Key header (the record key, decoded).
//
// Behaviour, for tests and the bench (all off by default: every call is
// answered 200 at once):
//
//	-delay D            every call waits D before its reply (the service's latency)
//	-fail-rate F        the first call of a fraction F (0 to 1) of the keys is
//	                    answered 503 (a transient failure); the keys are chosen
//	                    by a hash of the key, so a rerun fails the same ones
//	-fail-keys K,...    these keys are always answered 503 (a poisoned key)
//	-reject-keys K,...  these keys are always answered 400 (a permanent refusal)
//	-slow-keys K,...    calls of these keys wait -slow-delay instead of -delay
//
// It checks the order promised per record key: per calling process,
// topic, partition and record key, two calls never run at once and the
// offsets called never go down (a retry calls the same offset again).
// Each breach is a line in the stats' problems.
//
// Control, for the chaos driver and the tests: POST /_control/hold makes
// later calls wait before their reply (they are received: the effect has
// happened); POST /_control/release lets them reply and ends the hold; GET
// /_control/stats returns {"calls":N,"held":H,"held_by":{...},"ok_keys":K,
// "problems":[...]} (calls replied, calls waiting now in all and by
// caller, distinct keys answered 2xx, order breaches); GET /_control/calls returns every call replied so far, as a
// JSON array of the lines of -calls. SIGTERM or SIGINT: stop accepting,
// finish the calls under way, flush the file, exit 0.
//
// Like the checker, it imports no shardpipe package (TestIndependent).
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
)

func main() {
	calls := flag.String("calls", "", "file the calls are appended to, one JSON line each (required)")
	addrFile := flag.String("addr-file", "", "file to write the listening address to (required)")
	var b behaviour
	flag.DurationVar(&b.delay, "delay", 0, "every call waits this long before its reply")
	flag.Float64Var(&b.failRate, "fail-rate", 0, "fraction of the keys whose first call is answered 503 (0 to 1)")
	failKeys := flag.String("fail-keys", "", "comma-separated keys always answered 503")
	rejectKeys := flag.String("reject-keys", "", "comma-separated keys always answered 400")
	slowKeys := flag.String("slow-keys", "", "comma-separated keys whose calls wait -slow-delay instead of -delay")
	flag.DurationVar(&b.slowDelay, "slow-delay", 2*time.Second, "the wait of -slow-keys")
	flag.Parse()
	if *calls == "" || *addrFile == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "receiver: -calls and -addr-file are required, and no arguments are taken")
		os.Exit(2)
	}
	if b.failRate < 0 || b.failRate > 1 || b.delay < 0 || b.slowDelay < 0 {
		fmt.Fprintln(os.Stderr, "receiver: -fail-rate wants 0 to 1, -delay and -slow-delay at least 0")
		os.Exit(2)
	}
	b.fail, b.reject, b.slow = keySet(*failKeys), keySet(*rejectKeys), keySet(*slowKeys)
	if err := run(*calls, *addrFile, b); err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
}

func run(callsPath, addrFile string, b behaviour) error {
	f, err := os.OpenFile(callsPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	rc := newRecorder(bufio.NewWriter(f), b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rc.routes(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if err := writeAtomic(addrFile, ln.Addr().String()); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	rc.releaseAll() // held calls reply before the server waits for them
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serr := srv.Shutdown(sctx)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return errors.Join(serr, rc.err, rc.w.Flush(), f.Close())
}

// writeAtomic writes s to path through a temporary file and a rename, so a
// reader never sees half an address.
func writeAtomic(path, s string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// call is one call as the receiver records it: chaoscheck's Call, the one
// declaration of a line of the calls file.
type call = chaoscheck.Call

type recorder struct {
	b       behaviour
	mu      sync.Mutex
	w       *bufio.Writer
	err     error         // the first write error
	release chan struct{} // closed: calls reply at once
	calls   int
	held    int
	heldBy  map[string]int  // consumer -> calls received and not replied
	log     []call          // every call replied
	seen    map[string]bool // keys called before (-fail-rate fails a first call)
	ok      map[string]bool // keys answered 2xx
	lines   map[string]*line
	// problems are the breaches of the per-record-key order.
	problems []string
}

// line is one calling process's record key in a partition: its order.
type line struct {
	busy *call // the call running now, if any
	last int64
	seen bool
}

func newRecorder(w *bufio.Writer, b behaviour) *recorder {
	rc := &recorder{b: b, w: w, release: make(chan struct{}), seen: map[string]bool{}, ok: map[string]bool{},
		lines: map[string]*line{}, heldBy: map[string]int{}}
	close(rc.release) // not holding
	return rc
}

func (rc *recorder) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /_control/hold", func(w http.ResponseWriter, _ *http.Request) {
		rc.mu.Lock()
		select {
		case <-rc.release:
			rc.release = make(chan struct{})
		default: // already holding
		}
		rc.mu.Unlock()
	})
	mux.HandleFunc("POST /_control/release", func(w http.ResponseWriter, _ *http.Request) { rc.releaseAll() })
	mux.HandleFunc("GET /_control/stats", func(w http.ResponseWriter, _ *http.Request) {
		rc.mu.Lock()
		st := stats{Calls: rc.calls, Held: rc.held, OKKeys: len(rc.ok), Problems: append([]string{}, rc.problems...),
			HeldBy: map[string]int{}}
		for c, n := range rc.heldBy {
			if n > 0 {
				st.HeldBy[c] = n
			}
		}
		err := rc.err
		rc.mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("GET /_control/calls", func(w http.ResponseWriter, _ *http.Request) {
		rc.mu.Lock()
		log := append([]call{}, rc.log...)
		rc.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(log)
	})
	mux.HandleFunc("POST /", rc.effect)
	return mux
}

func (rc *recorder) releaseAll() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	select {
	case <-rc.release:
	default:
		close(rc.release)
	}
}

// effect is the external effect: it records the call once the reply is
// sent. A call received during a hold waits for the release.
func (rc *recorder) effect(w http.ResponseWriter, r *http.Request) {
	c := call{Received: time.Now().UTC(), Status: http.StatusOK, Topic: r.Header.Get("Shardpipe-Topic")}
	c.Key, _ = url.PathUnescape(r.Header.Get("Idempotency-Key"))
	c.RecordKey, _ = url.PathUnescape(r.Header.Get("Kafka-Key"))
	c.Consumer, _ = url.PathUnescape(r.Header.Get("Shardpipe-Consumer"))
	p, perr := strconv.ParseInt(r.Header.Get("Shardpipe-Partition"), 10, 32)
	o, oerr := strconv.ParseInt(r.Header.Get("Shardpipe-Offset"), 10, 64)
	c.Partition, c.Offset = int32(p), o
	if c.Key == "" || perr != nil || oerr != nil {
		c.Status = http.StatusBadRequest // recorded all the same: the checker names it
	}
	_, _ = io.Copy(io.Discard, r.Body)
	ln := fmt.Sprintf("%s %s/%d %q", c.Consumer, c.Topic, c.Partition, c.RecordKey)
	rc.mu.Lock()
	release := rc.release
	rc.held++
	rc.heldBy[c.Consumer]++
	if c.Status == http.StatusOK {
		c.Status = rc.b.status(c.Key, rc.seen[c.Key])
	}
	rc.seen[c.Key] = true
	l := rc.lines[ln]
	if l == nil {
		l = &line{}
		rc.lines[ln] = l
	}
	if l.busy != nil {
		rc.problems = append(rc.problems, fmt.Sprintf("%s: offset %d called while an earlier call of its record key ran", ln, c.Offset))
	}
	if l.seen && c.Offset < l.last {
		rc.problems = append(rc.problems, fmt.Sprintf("%s: offset %d called after offset %d", ln, c.Offset, l.last))
	}
	l.busy, l.seen, l.last = &c, true, c.Offset
	rc.mu.Unlock()
	ended := func() { // the call ended for its caller: it may call the key's next record
		rc.mu.Lock()
		if l.busy == &c {
			l.busy = nil
		}
		rc.mu.Unlock()
	}
	// A caller that gives up (its timeout) or dies ends its call then,
	// though the call is recorded as before, once replied.
	stop := context.AfterFunc(r.Context(), ended)
	if d := rc.b.wait(c.Key); d > 0 {
		time.Sleep(d) // the service's latency
	}
	<-release
	stop()
	ended() // before the reply: the caller may call its next record once it has it
	w.WriteHeader(c.Status)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	c.Replied = time.Now().UTC()
	line, err := json.Marshal(c)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.held--
	rc.heldBy[c.Consumer]--
	rc.calls++
	rc.log = append(rc.log, c)
	if c.Status/100 == 2 {
		rc.ok[c.Key] = true
	}
	if err == nil {
		_, err = rc.w.Write(append(line, '\n'))
	}
	if err == nil {
		err = rc.w.Flush()
	}
	if err != nil && rc.err == nil {
		rc.err = err
	}
}

// stats is the reply of GET /_control/stats.
type stats struct {
	Calls  int `json:"calls"`   // calls replied
	Held   int `json:"held"`    // calls received and waiting for their reply
	OKKeys int `json:"ok_keys"` // distinct keys answered 2xx
	// HeldBy counts the calls received and not replied, by caller.
	HeldBy   map[string]int `json:"held_by"`
	Problems []string       `json:"problems"` // breaches of the per-record-key order
}

// behaviour is how the receiver answers: its latency and its failures.
type behaviour struct {
	delay, slowDelay   time.Duration
	failRate           float64
	fail, reject, slow map[string]bool
}

// keySet reads a comma-separated list of keys.
func keySet(s string) map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			m[k] = true
		}
	}
	return m
}

// status is the answer to a call of key (calledBefore: not its first).
func (b behaviour) status(key string, calledBefore bool) int {
	switch {
	case b.reject[key]:
		return http.StatusBadRequest
	case b.fail[key]:
		return http.StatusServiceUnavailable
	case !calledBefore && b.failRate > 0 && hashFraction(key) < b.failRate:
		return http.StatusServiceUnavailable
	}
	return http.StatusOK
}

// wait is how long a call of key waits before its reply.
func (b behaviour) wait(key string) time.Duration {
	if b.slow[key] {
		return b.slowDelay
	}
	return b.delay
}

// hashFraction maps key to [0, 1), the same on every run.
func hashFraction(key string) float64 {
	h := sha256.Sum256([]byte(key))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / float64(1<<53)
}
