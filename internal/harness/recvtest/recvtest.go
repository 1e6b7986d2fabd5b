// Package recvtest is the in-process HTTP receiver the unit tests of the
// HTTP effect share (httpeffect's and cmd/shardpipe/internal/settings'): an httptest server
// that records each request with its body and counts the connections it
// accepted. Tests across processes use internal/harness/cmd/receiver instead.
// It imports no shardpipe package.
package recvtest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Receiver is a running httptest server that records its requests. It is
// safe for concurrent use.
type Receiver struct {
	// Server is the running server: its URL, its Listener, Close.
	Server *httptest.Server
	conns  atomic.Int64
	mu     sync.Mutex
	reqs   []*http.Request
	bodies []string
}

// New starts a Receiver that records each request, then answers it with
// reply; the test's cleanup closes it.
func New(t testing.TB, reply http.HandlerFunc) *Receiver {
	rc := &Receiver{}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs, rc.bodies = append(rc.reqs, r), append(rc.bodies, string(b))
		rc.mu.Unlock()
		reply(w, r)
	}))
	rc.Server.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rc.conns.Add(1)
		}
	}
	rc.Server.Start()
	t.Cleanup(rc.Server.Close)
	return rc
}

// Calls returns the requests received so far and their bodies, in the
// order they arrived (copies of the lists).
func (rc *Receiver) Calls() ([]*http.Request, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*http.Request(nil), rc.reqs...), append([]string(nil), rc.bodies...)
}

// Conns is the number of connections the server accepted.
func (rc *Receiver) Conns() int64 { return rc.conns.Load() }
