package secure

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Step is the step of connecting to a server that failed.
type Step string

// The steps of a connection, in order.
const (
	// StepConnect: the TCP connection (refused, no route, timeout).
	StepConnect Step = "TCP connect"
	// StepTLS: the TLS handshake (unknown authority, name mismatch,
	// expired certificate, a listener that does not speak TLS, a client
	// certificate the server wants or refuses).
	StepTLS Step = "TLS handshake"
	// StepFirstRequest: the connection was made (TLS, when on, agreed) but
	// the server closed it right after the first request: a listener that
	// wants SASL (or TLS) the client does not give, or a port that is no
	// Kafka broker's client listener (a KRaft controller's).
	StepFirstRequest Step = "first request"
	// StepMechanism: the SASL mechanism is not enabled on the listener.
	StepMechanism Step = "SASL mechanism"
	// StepAuthentication: the credentials were refused.
	StepAuthentication Step = "authentication"
	// StepAuthorization: authenticated, but not allowed this request.
	StepAuthorization Step = "authorization"
)

// StepError is a failed connection or request, named by the step that
// failed, why, and what to fix. Diagnose makes one from a client's error.
type StepError struct {
	// Step is the step that failed.
	Step Step
	// Reason is why, in a few words ("unknown authority", "name mismatch",
	// "expired", "wrong user or password", "NOPERM ...").
	Reason string
	// Fix says what to change, in terms of the settings of this package.
	Fix string
	// Err is the client's error.
	Err error
}

// Error names the step, the reason and the fix.
func (e *StepError) Error() string {
	return fmt.Sprintf("%s failed (%s): %s", e.Step, e.Reason, e.Fix)
}

// Unwrap returns the client's error.
func (e *StepError) Unwrap() error { return e.Err }

// Diagnose names the connection step err comes from, or returns nil when
// err is not a connection, TLS, SASL or authorization failure (or is nil).
// It understands the errors of net, crypto/tls, franz-go (kerr) and
// go-redis replies (WRONGPASS, NOAUTH, NOPERM). Its Reason and Fix hold no
// secret; Err is the client's error as it came.
func Diagnose(err error) *StepError {
	if err == nil {
		return nil
	}
	var se *StepError
	if errors.As(err, &se) {
		return se
	}
	mk := func(step Step, reason, fix string) *StepError {
		return &StepError{Step: step, Reason: reason, Fix: fix, Err: err}
	}
	if s := diagnoseTLS(err); s != nil {
		s.Err = err
		return s
	}
	switch {
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return mk(StepMechanism, "the listener does not enable this mechanism",
			"use a mechanism the listener lists in sasl.enabled.mechanisms, or connect to the listener meant for it")
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.IllegalSaslState):
		return mk(StepAuthentication, "wrong user or password, expired token, or unknown user",
			"check the user and the password or token (and that the user exists for this mechanism)")
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.GroupAuthorizationFailed),
		errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		var ke *kerr.Error
		errors.As(err, &ke)
		return mk(StepAuthorization, ke.Message, "grant the principal the ACL the request needs (see the least-privilege ACLs)")
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "WRONGPASS"):
		return mk(StepAuthentication, "wrong user or password, or the user is disabled", "check the Redis ACL user and its password")
	case strings.Contains(msg, "NOAUTH"):
		return mk(StepAuthentication, "the server needs a password", "give the Redis ACL user and its password")
	case strings.Contains(msg, "NOPERM"):
		return mk(StepAuthorization, redisReply(msg, "NOPERM"), "grant the Redis ACL user the commands and key patterns of the ledger rule")
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return mk(StepConnect, reasonOf(op.Err), "check the address and that the server listens on it")
	}
	var fe *kgo.ErrFirstReadEOF
	if errors.As(err, &fe) {
		if strings.Contains(fe.Error(), "using TLS when") { // the client spoke TLS
			return mk(StepTLS, fe.Error(), "match the client's TLS and SASL settings to the listener's")
		}
		// Past the dial (and a TLS handshake, when on): franz-go guesses
		// TLS or SASL missing; the port may also be no broker's client
		// listener (a KRaft controller's). No handshake failed.
		return mk(StepFirstRequest, "the server closed the connection right after the first request",
			"check that the address names a Kafka broker's client listener, and match the client's TLS and SASL settings to the listener's")
	}
	if strings.Contains(msg, "appear to be a tls alert") {
		return mk(StepTLS, "the listener speaks TLS and the client does not", "turn TLS on (a CA file, or the system roots)")
	}
	return nil
}

// diagnoseTLS names a TLS handshake failure.
func diagnoseTLS(err error) *StepError {
	tlsFix := func(reason, fix string) *StepError { return &StepError{Step: StepTLS, Reason: reason, Fix: fix} }
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &ua):
		return tlsFix("unknown authority", "give the CA file that signed the server's certificate (or trust the system roots if a public CA signed it)")
	case errors.As(err, &hn):
		return tlsFix("name mismatch: "+hn.Error(), "connect by a name the server's certificate carries, or set the TLS server name to one of them")
	case errors.As(err, &ci) && ci.Reason == x509.Expired:
		return tlsFix("expired or not yet valid: "+ci.Detail, "renew the server's certificate (or fix the clock)")
	case errors.As(err, &ci):
		return tlsFix("invalid certificate: "+ci.Error(), "give the server a certificate valid for serving TLS")
	case errors.As(err, &rh):
		return tlsFix("the server does not speak TLS on this port", "turn TLS off for this listener, or connect to the TLS listener")
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "tls: certificate required"):
		return tlsFix("the server wants a client certificate", "give a client certificate and key (mutual TLS)")
	case strings.Contains(msg, "remote error: tls: "):
		return tlsFix("the server refused the handshake: "+msg[strings.Index(msg, "remote error: tls: ")+len("remote error: "):],
			"give a client certificate the server trusts, or check the server's TLS settings")
	case strings.Contains(msg, "tls: "):
		return tlsFix(msg[strings.Index(msg, "tls: "):], "check the TLS settings against the server's")
	}
	return nil
}

// redisReply returns the reply from its code on, one line.
func redisReply(msg, code string) string {
	msg = msg[strings.Index(msg, code):]
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

func reasonOf(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to the host"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return err.Error()
}
