package httpeffect_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/httpeffect"
	"github.com/shardpipe/shardpipe/internal/harness/recvtest"
	"github.com/shardpipe/shardpipe/sink"
)

// TestHTTPEffectHeaderNamesDifferingInCase: Kafka header names that differ
// only in case reach the receiver apart: the first as it is (HTTP keeps no
// case), each later one with every letter percent-encoded, which
// url.PathUnescape gives back exactly; repeats of one name stay repeats of
// one header.
func TestHTTPEffectHeaderNamesDifferingInCase(t *testing.T) {
	type got struct {
		name   string // url.PathUnescape of the header name after Kafka-Header-
		values string // comma-joined
	}
	tests := []struct {
		name    string
		headers []sink.Header
		want    map[string]got // request header name as the receiver reads it
	}{
		{"case variants", []sink.Header{{Key: "trace", Value: []byte("a")}, {Key: "Trace", Value: []byte("b")},
			{Key: "trace", Value: []byte("c")}, {Key: "TRACE", Value: []byte("d")}, {Key: "Trace", Value: []byte("e")}},
			map[string]got{"Kafka-Header-Trace": {"Trace", "a,c"}, "Kafka-Header-%54%72%61%63%65": {"Trace", "b,e"},
				"Kafka-Header-%54%52%41%43%45": {"TRACE", "d"}}},
		{"first capitalised", []sink.Header{{Key: "Zone-ID", Value: []byte("1")}, {Key: "zone-id", Value: []byte("2")}},
			map[string]got{"Kafka-Header-Zone-Id": {"Zone-Id", "1"}, "Kafka-Header-%7a%6f%6e%65-%69%64": {"zone-id", "2"}}},
		{"no variants", []sink.Header{{Key: "a", Value: []byte("1")}, {Key: "b c", Value: []byte("2")}, {Key: "a", Value: []byte("3")}},
			map[string]got{"Kafka-Header-A": {"A", "1,3"}, "Kafka-Header-B%20c": {"B c", "2"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := recvtest.New(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
			e := testEffect(t, rc.Server.URL, 5*time.Second)
			if err := e.Do(context.Background(), "k", &sink.Record{Topic: "t", Value: []byte("v"), Headers: tc.headers}); err != nil {
				t.Fatal(err)
			}
			reqs, _ := rc.Calls()
			n := 0
			for k, vs := range reqs[0].Header {
				enc, ok := strings.CutPrefix(k, httpeffect.HeaderKafkaPrefix)
				if !ok {
					continue
				}
				n++
				name, err := url.PathUnescape(enc)
				if g := (got{name, strings.Join(vs, ",")}); err != nil || g != tc.want[k] {
					t.Errorf("header %s: %+v (%v), want %+v", k, g, err, tc.want[k])
				}
			}
			if n != len(tc.want) {
				t.Errorf("%d Kafka headers, want %d: %v", n, len(tc.want), reqs[0].Header)
			}
		})
	}
}
