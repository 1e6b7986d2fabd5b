package pgeffect

import (
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// unavailable reports whether err says PostgreSQL could not be used at all,
// not that it refused this record's transaction: no connection (refused,
// reset, cut mid-statement, timed out), a server starting, shutting down
// or recovering (SQLSTATE class 57P), out of connections (53300), or a
// connection exception (class 08). Refused credentials (class 28) and every
// other answer of the server are not: those are counted against the
// record as failures are.
func unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") || pe.Code == "53300"
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}
