package httpeffect

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/shardpipe/shardpipe/secure"
	"github.com/shardpipe/shardpipe/sink"
)

// Request headers. Values (and Kafka header names after the prefix) are
// percent-encoded where HTTP would refuse or mangle them.
const (
	HeaderIdempotencyKey = "Idempotency-Key"     // the business key
	HeaderKafkaKey       = "Kafka-Key"           // the record key; absent when the record has none
	HeaderKafkaPrefix    = "Kafka-Header-"       // + each Kafka header's name
	HeaderTopic          = "Shardpipe-Topic"     // source topic
	HeaderPartition      = "Shardpipe-Partition" // source partition
	HeaderOffset         = "Shardpipe-Offset"    // source offset
	HeaderEpoch          = "Shardpipe-Epoch"     // the fencing epoch of the assignment
	HeaderMember         = "Shardpipe-Member"    // the consumer group member ID
	HeaderConsumer       = "Shardpipe-Consumer"  // host/pid of the calling process
)

// DefaultTimeout bounds one call unless Timeout says otherwise.
const DefaultTimeout = 10 * time.Second

// MaxResponseHeaderBytes bounds the headers of a reply (64 KiB): a
// receiver that sends more fails the call, an error to retry, instead of
// making the effect read and hold them (net/http's own bound is 10 MiB).
const MaxResponseHeaderBytes = 64 << 10

// Effect POSTs each record's value to one URL. It is safe for concurrent
// use; connections are kept alive and reused (up to 64 idle per host, one
// per partition worker calling at once).
type Effect struct {
	url      string // as given
	redacted string // for errors and logs: secure.RedactURL
	timeout  time.Duration
	tr       *http.Transport // called directly: see Do
	consumer string
	rootCAs  *x509.CertPool
}

// New returns an Effect that POSTs to rawURL, an absolute http:// or
// https:// URL with a host. It does no I/O.
func New(rawURL string, opts ...Opt) (*Effect, error) {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		return nil, errors.New("httpeffect: not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return nil, fmt.Errorf("httpeffect: %q: want an absolute http:// or https:// URL with a host", secure.RedactURL(rawURL))
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// One connection per partition worker calling at once; the default of 2
	// idle connections per host would close and redial the others.
	tr.MaxIdleConnsPerHost = 64
	tr.MaxResponseHeaderBytes = MaxResponseHeaderBytes
	host, _ := os.Hostname()
	e := &Effect{url: u.String(), redacted: secure.RedactURL(u.String()), timeout: DefaultTimeout,
		tr: tr, consumer: host + "/" + strconv.Itoa(os.Getpid())}
	for _, o := range opts {
		o.apply(e)
	}
	if e.rootCAs != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: e.rootCAs, MinVersion: tls.VersionTLS12}
	}
	if e.timeout <= 0 {
		return nil, fmt.Errorf("httpeffect: timeout %v: must be positive", e.timeout)
	}
	return e, nil
}

// Do sends one record whose business key is key: a 2xx reply is success.
// A 4xx other than 408 and 429 is permanent: the error wraps
// sink.ErrRejected (the record is dead-lettered at once, or stops the
// pipeline: pipeline.EffectAttempts). Any other status (408, 429, 5xx) or a network error is an error
// to retry; the timeout ends the call's context, so the guard treats its
// outcome as unknown (the call may or may not have landed): a retry calls
// again with the same Idempotency-Key, which the receiver's check absorbs.
// No redirect is followed: a 3xx is an error to retry naming the status and
// the Location (its password and query values hidden). A call that failed before it had a
// connection to write on (its context ended first, the dial failed) sent
// nothing: its error wraps sink.ErrNotApplied, so the guard runs the record
// again rather than take it as done. Its signature is
// pipeline.ExternalEffect's. A span in ctx goes along as a traceparent
// header. It costs one HTTP round trip; at most 256
// bytes of a failed reply's body go into the error, which names the URL
// only through secure.RedactURL (no password, no query value).
func (e *Effect) Do(ctx context.Context, key string, r *sink.Record) error {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	var conn atomic.Bool // a connection was had: bytes of the request may have gone out
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { conn.Store(true) }})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(r.Value))
	if err != nil {
		return fmt.Errorf("http effect: %w", secure.RedactError(err))
	}
	if u := req.URL.User; u != nil {
		// As an http.Client would: the URL's user and password authenticate.
		pw, _ := u.Password()
		req.SetBasicAuth(u.Username(), pw)
	}
	e.headers(req.Header, key, r)
	// A traced call (pipeline.Tracer: ctx holds the effect's span) tells the
	// receiver its trace as a W3C traceparent header; none otherwise.
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	// The transport itself, not an http.Client: no redirect is followed. A
	// 301, 302 or 303 would turn the POST into a bodyless GET whose 2xx
	// reads as success, a 307 or 308 would send the body and its headers to
	// another host; and a Client parses the Location before its
	// CheckRedirect is asked, failing an unparsable one with an error that
	// quotes it whole. The 3xx is the reply, which fails below.
	resp, err := e.tr.RoundTrip(req)
	if err != nil {
		// A *url.Error, as http.Client's: it names the method and the URL
		// (secure.RedactURL: no password, no query values).
		err = &url.Error{Op: "Post", URL: e.redacted, Err: err}
		if !conn.Load() {
			// No connection was had for the request, so not a byte of it was
			// written: the receiver cannot have acted on it.
			return fmt.Errorf("http effect: %w: nothing was sent: %w", err, sink.ErrNotApplied)
		}
		return fmt.Errorf("http effect: %w", err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	// Drain a bounded rest so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		return fmt.Errorf("http effect: POST %s: %s: %s not followed", e.redacted, resp.Status, redirectTarget(resp.Header))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := fmt.Errorf("http effect: POST %s: %s: %q", e.redacted, resp.Status, bytes.TrimSpace(head))
		if Permanent(resp.StatusCode) {
			return fmt.Errorf("%w: %w", err, sink.ErrRejected)
		}
		return err
	}
	return nil
}

// Permanent reports whether a reply status says no retry can succeed: a
// 4xx other than 408 (Request Timeout) and 429 (Too Many Requests).
func Permanent(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}

// headers sets the request headers for r with business key key.
func (e *Effect) headers(h http.Header, key string, r *sink.Record) {
	h.Set("Content-Type", "application/octet-stream")
	h.Set(HeaderIdempotencyKey, headerValue([]byte(key)))
	if r.Key != nil {
		h.Set(HeaderKafkaKey, headerValue(r.Key))
	}
	kafkaHeaders(h, r.Headers)
	h.Set(HeaderTopic, r.Topic)
	h.Set(HeaderPartition, strconv.FormatInt(int64(r.Partition), 10))
	h.Set(HeaderOffset, strconv.FormatInt(r.Offset, 10))
	h.Set(HeaderEpoch, strconv.FormatInt(r.Epoch, 10))
	if r.Member != "" {
		h.Set(HeaderMember, headerValue([]byte(r.Member)))
	}
	h.Set(HeaderConsumer, headerValue([]byte(e.consumer)))
}

// headerValue percent-encodes '%' and every byte outside visible ASCII
// (0x21-0x7E), so any bytes travel as a valid header value; the receiver
// gets them back with url.PathUnescape. Typical keys (order-42, a UUID)
// are sent as they are.
func headerValue(b []byte) string {
	return percentEncode(b, func(c byte) bool { return c > 0x20 && c < 0x7f && c != '%' })
}

// headerName percent-encodes '%' and every byte that is not an HTTP token
// character, so any Kafka header name makes a valid header name.
func headerName(s string) string {
	return percentEncode([]byte(s), func(c byte) bool { return isLetter(c) || tokenOther(c) })
}

// caseVariantName is headerName with every ASCII letter percent-encoded
// too: the name of a Kafka header that differs only in case from an
// earlier one, which HTTP (case-insensitive) would merge with it.
func caseVariantName(s string) string { return percentEncode([]byte(s), tokenOther) }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// tokenOther reports whether c is an HTTP token character other than a
// letter, '%' excluded (it starts an escape).
func tokenOther(c byte) bool {
	return c >= '0' && c <= '9' || c != '%' && strings.IndexByte("!#$&'*+-.^_`|~", c) >= 0
}

func percentEncode(b []byte, keep func(byte) bool) string {
	n := 0
	for _, c := range b {
		if !keep(c) {
			n++
		}
	}
	if n == 0 {
		return string(b)
	}
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, len(b)+2*n)
	for _, c := range b {
		if keep(c) {
			out = append(out, c)
		} else {
			out = append(out, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(out)
}
