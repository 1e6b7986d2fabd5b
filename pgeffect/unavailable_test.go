package pgeffect

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shardpipe/shardpipe/sink"
)

// TestUnavailable: a connection that failed or a server that says it
// cannot serve now wraps sink.ErrUnavailable (retried, not counted); the
// server's answers about the transaction itself do not.
func TestUnavailable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"dial refused", fmt.Errorf("failed to connect: %w", refused), true},
		{"connection cut mid-statement", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"closed connection", fmt.Errorf("tx: %w", pgconn.ErrConnClosed), true},
		{"admin shutdown (57P01)", &pgconn.PgError{Code: "57P01"}, true},
		{"starting up (57P03)", &pgconn.PgError{Code: "57P03"}, true},
		{"too many connections (53300)", &pgconn.PgError{Code: "53300"}, true},
		{"connection failure (08006)", &pgconn.PgError{Code: "08006"}, true},
		{"password refused (28P01)", &pgconn.PgError{Code: "28P01"}, false},
		{"check violation (23514)", &pgconn.PgError{Code: "23514"}, false},
		{"statement timeout (57014)", &pgconn.PgError{Code: "57014"}, false},
		{"serialization failure (40001)", &pgconn.PgError{Code: "40001"}, false},
		{"an error of the caller's Work", errors.New("work: bad state"), false},
	} {
		if got := unavailable(tt.err); got != tt.want {
			t.Errorf("%s: unavailable = %v, want %v", tt.name, got, tt.want)
		}
		if got := errors.Is(notApplied(tt.err), sink.ErrUnavailable); got != tt.want {
			t.Errorf("%s: notApplied wraps ErrUnavailable = %v, want %v", tt.name, got, tt.want)
		}
		if !errors.Is(notApplied(tt.err), sink.ErrNotApplied) {
			t.Errorf("%s: notApplied does not wrap ErrNotApplied", tt.name)
		}
	}
}
