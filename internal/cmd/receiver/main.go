// Command receiver is the external system of the chaos run's guard pass:
// an HTTP server that `shardpipe run --effect http` POSTs each record to,
// and that records every call, so the independent checker can count how
// many times each order's effect ran, and by whom.
//
//	go run ./internal/cmd/receiver -calls calls.jsonl -addr-file addr
//
// It listens on a free 127.0.0.1 port, writes its address (host:port) to
// -addr-file once it accepts connections, and answers every POST with 200.
// Each call is one JSON line in -calls, written when the reply has been
// sent:
//
//	{"key":"order-1","topic":"t","partition":3,"offset":41,"consumer":"host/123",
//	 "received":"2026-01-01T00:00:00.1Z","replied":"2026-01-01T00:00:00.1Z","status":200}
//
// key is the Idempotency-Key, topic/partition/offset the Shardpipe-Topic,
// -Partition and -Offset headers, consumer the Shardpipe-Consumer header
// (host/pid of the calling process); percent-encoded values are decoded.
//
// Control, for the chaos driver: POST /_control/hold makes later calls
// wait before their reply (they are received: the effect has happened);
// POST /_control/release lets them reply and ends the hold; GET
// /_control/stats returns {"calls":N,"held":H} (calls replied, calls
// waiting now). SIGTERM or SIGINT: stop accepting, finish the calls under
// way, flush the file, exit 0.
//
// Like the checker, it imports no shardpipe package (TestIndependent).
package main

import (
	"bufio"
	"context"
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
	"sync"
	"syscall"
	"time"
)

func main() {
	calls := flag.String("calls", "", "file the calls are appended to, one JSON line each (required)")
	addrFile := flag.String("addr-file", "", "file to write the listening address to (required)")
	flag.Parse()
	if *calls == "" || *addrFile == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "receiver: -calls and -addr-file are required, and no arguments are taken")
		os.Exit(2)
	}
	if err := run(*calls, *addrFile); err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
}

func run(callsPath, addrFile string) error {
	f, err := os.OpenFile(callsPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	rc := &recorder{w: bufio.NewWriter(f), release: make(chan struct{})}
	close(rc.release) // not holding
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

// call is one line of the calls file.
type call struct {
	Key       string    `json:"key"`
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Offset    int64     `json:"offset"`
	Consumer  string    `json:"consumer"`
	Received  time.Time `json:"received"`
	Replied   time.Time `json:"replied"`
	Status    int       `json:"status"`
}

type recorder struct {
	mu      sync.Mutex
	w       *bufio.Writer
	err     error         // the first write error
	release chan struct{} // closed: calls reply at once
	calls   int
	held    int
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
		calls, held, err := rc.calls, rc.held, rc.err
		rc.mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]int{"calls": calls, "held": held})
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
	c.Consumer, _ = url.PathUnescape(r.Header.Get("Shardpipe-Consumer"))
	p, perr := strconv.ParseInt(r.Header.Get("Shardpipe-Partition"), 10, 32)
	o, oerr := strconv.ParseInt(r.Header.Get("Shardpipe-Offset"), 10, 64)
	c.Partition, c.Offset = int32(p), o
	if c.Key == "" || perr != nil || oerr != nil {
		c.Status = http.StatusBadRequest // recorded all the same: the checker names it
	}
	_, _ = io.Copy(io.Discard, r.Body)
	rc.mu.Lock()
	release := rc.release
	rc.held++
	rc.mu.Unlock()
	<-release
	w.WriteHeader(c.Status)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	c.Replied = time.Now().UTC()
	line, err := json.Marshal(c)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.held--
	rc.calls++
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
