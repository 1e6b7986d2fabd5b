package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// Request headers of --effect http. Values (and Kafka header names after
// the prefix) are percent-encoded where HTTP would refuse or mangle them:
// see headerValue.
const (
	hdrIdempotencyKey = "Idempotency-Key" // the business key
	hdrKafkaKey       = "Kafka-Key"       // the record key; absent when the record has none
	hdrKafkaHeader    = "Kafka-Header-"   // + each Kafka header's name
	hdrTopic          = "Shardpipe-Topic" // source topic
	hdrPartition      = "Shardpipe-Partition"
	hdrOffset         = "Shardpipe-Offset"
	hdrEpoch          = "Shardpipe-Epoch"    // the fencing epoch of the assignment
	hdrMember         = "Shardpipe-Member"   // the consumer group member ID
	hdrConsumer       = "Shardpipe-Consumer" // host/pid of the calling process
)

// httpEffect POSTs each record's value to one URL: the external effect of
// --effect http, which runs in guard mode (claim, call, mark done). It is
// safe for concurrent use; connections are kept alive and reused.
type httpEffect struct {
	url      string // as given
	redacted string // for errors and logs: no password
	timeout  time.Duration
	client   *http.Client
	consumer string
}

func newHTTPEffect(hc httpConfig) *httpEffect {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// One connection per partition worker calling at once; the default of 2
	// idle connections per host would close and redial the others.
	tr.MaxIdleConnsPerHost = 64
	host, _ := os.Hostname()
	return &httpEffect{url: hc.url.String(), redacted: hc.url.Redacted(), timeout: hc.timeout,
		client: &http.Client{Transport: tr}, consumer: host + "/" + strconv.Itoa(os.Getpid())}
}

// newHTTPGuarded is --effect http: guard mode (a sink.Guard on the ledger's
// Redis, key space, TTL and key source) around an HTTP call per record; in
// a per-topic key space, one Guard per topic.
func newHTTPGuarded(lc ledgerConfig, hc httpConfig, topics []string, rdb redis.UniversalClient, log *slog.Logger) (pipeline.Applier, error) {
	log.Info("ledger key space", "key_space", lc.keySpace, "ledger_key", lc.prefixFor("<topic>")+"<business key>")
	effect := newHTTPEffect(hc).do
	guarded := func(topic string) (pipeline.Applier, error) {
		g, err := sink.NewGuard(rdb, sink.WithPrefix(lc.prefixFor(topic)), sink.WithTTL(lc.ttl), sink.WithKeySource(lc.keys),
			sink.WithLease(guardLease), sink.WithLogger(log))
		if err != nil {
			return nil, fmt.Errorf("guard: %w", err)
		}
		return pipeline.Guarded(g, effect), nil
	}
	if lc.keySpace != keySpacePerTopic {
		return guarded("")
	}
	gs := make(topicLedgers, len(topics))
	for _, t := range topics {
		g, err := guarded(t)
		if err != nil {
			return nil, err
		}
		gs[t] = g
	}
	return gs, nil
}

// do sends one record: a 2xx reply is success; any other status, a network
// error or the timeout is an error (the effect's outcome is then unknown to
// the caller, and the batch is applied again).
func (e *httpEffect) do(ctx context.Context, key string, r *sink.Record) error {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(r.Value))
	if err != nil {
		return fmt.Errorf("http effect: %w", err)
	}
	e.headers(req.Header, key, r)
	resp, err := e.client.Do(req)
	if err != nil {
		// A *url.Error: it names the method and the URL, without its password.
		return fmt.Errorf("http effect: %w", err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	// Drain a bounded rest so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("http effect: POST %s: %s: %q", e.redacted, resp.Status, bytes.TrimSpace(head))
	}
	return nil
}

// headers sets the request headers for r with business key key.
func (e *httpEffect) headers(h http.Header, key string, r *sink.Record) {
	h.Set("Content-Type", "application/octet-stream")
	h.Set(hdrIdempotencyKey, headerValue([]byte(key)))
	if r.Key != nil {
		h.Set(hdrKafkaKey, headerValue(r.Key))
	}
	for _, kh := range r.Headers {
		h.Add(hdrKafkaHeader+headerName(kh.Key), headerValue(kh.Value))
	}
	h.Set(hdrTopic, r.Topic)
	h.Set(hdrPartition, strconv.FormatInt(int64(r.Partition), 10))
	h.Set(hdrOffset, strconv.FormatInt(r.Offset, 10))
	h.Set(hdrEpoch, strconv.FormatInt(r.Epoch, 10))
	if r.Member != "" {
		h.Set(hdrMember, headerValue([]byte(r.Member)))
	}
	h.Set(hdrConsumer, headerValue([]byte(e.consumer)))
}

// headerValue percent-encodes '%' and every byte outside visible ASCII
// (0x21-0x7E), so any bytes travel as a valid header value; the receiver
// gets them back with url.PathUnescape. Typical keys (order-42, a UUID)
// are sent as they are.
func headerValue(b []byte) string {
	return percentEncode(b, func(c byte) bool { return c > 0x20 && c < 0x7f && c != '%' })
}

// headerName percent-encodes '%' and every byte that is not an HTTP token
// character, so any Kafka header name makes a valid header name. HTTP
// header names are case-insensitive: Kafka headers differing only in case
// arrive under one name.
func headerName(s string) string {
	return percentEncode([]byte(s), func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c != '%' && strings.IndexByte("!#$&'*+-.^_`|~", c) >= 0
	})
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
