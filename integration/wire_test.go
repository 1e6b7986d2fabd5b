package integration_test

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// wire is a franz-go Dialer (kgo.Dialer(w.dial)) whose connections can be
// held, as a network partition or a frozen host would: while held, every
// request the client writes is kept back, in order, and reaches the broker
// only at release. A held write returns at once, so the client keeps running
// and building requests (heartbeats, commits) that the broker does not see:
// its session expires on the broker while the client believes it is still a
// member. Give the client a long kgo.RequestTimeoutOverhead, so that it does
// not give up on the held requests' answers.
type wire struct {
	mu    sync.Mutex
	held  bool
	conns []*heldConn
	// sent receives the API key of each request kept back, without
	// blocking (see keptBack).
	sent chan int16
}

func newWire() *wire { return &wire{sent: make(chan int16, 4096)} }

func (w *wire) dial(ctx context.Context, network, host string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	hc := &heldConn{Conn: c, w: w}
	w.mu.Lock()
	w.conns = append(w.conns, hc)
	w.mu.Unlock()
	return hc, nil
}

// hold starts keeping back every request on every connection, old and new.
func (w *wire) hold() {
	w.mu.Lock()
	w.held = true
	w.mu.Unlock()
}

// release sends what was kept back, in order per connection, and lets
// requests through again.
func (w *wire) release() error {
	w.mu.Lock()
	w.held = false
	conns := append([]*heldConn(nil), w.conns...)
	w.mu.Unlock()
	var first error
	for _, c := range conns {
		c.mu.Lock()
		if err := c.flush(); err != nil && first == nil {
			first = err
		}
		c.mu.Unlock()
	}
	return first
}

func (w *wire) isHeld() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held
}

// keptBack waits until a request with API key (8: OffsetCommit, 12:
// Heartbeat, 68: ConsumerGroupHeartbeat) has been kept back, or ctx ends.
func (w *wire) keptBack(ctx context.Context, key int16) error {
	for {
		select {
		case k := <-w.sent:
			if k == key {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// heldConn is one connection of a wire.
type heldConn struct {
	net.Conn
	w       *wire
	mu      sync.Mutex
	pending [][]byte
}

// Write keeps b back while the wire is held; otherwise it first sends what
// was kept back, so the order of requests is never changed. franz-go writes
// each request whole in one call: a size, then the API key.
func (c *heldConn) Write(b []byte) (int, error) {
	held := c.w.isHeld()
	c.mu.Lock()
	defer c.mu.Unlock()
	if held {
		c.pending = append(c.pending, append([]byte(nil), b...))
		if len(b) >= 6 {
			select {
			case c.w.sent <- int16(binary.BigEndian.Uint16(b[4:6])):
			default:
			}
		}
		return len(b), nil
	}
	if err := c.flush(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// flush sends what was kept back; c.mu is held.
func (c *heldConn) flush() error {
	for len(c.pending) > 0 {
		if _, err := c.Conn.Write(c.pending[0]); err != nil {
			return err
		}
		c.pending = c.pending[1:]
	}
	return nil
}
