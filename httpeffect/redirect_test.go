package httpeffect_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/recvtest"
	"github.com/shardpipe/shardpipe/secure"
	"github.com/shardpipe/shardpipe/sink"
)

// TestHTTPEffectNoRedirect: a 3xx reply is a failure to retry naming the
// status and the Location (its password and query values hidden); the
// redirect is not followed, so the other URL gets no call: not a bodyless
// GET taken as success (301, 302, 303), not the body with the
// Idempotency-Key and the Kafka headers (307, 308).
func TestHTTPEffectNoRedirect(t *testing.T) {
	target := recvtest.New(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	host := strings.TrimPrefix(target.Server.URL, "http://")
	loc := "http://mallory:pw-s3cret@" + host + "/steal?token=tok-s3cret&id=&flag#frag-s3cret"
	tests := []struct {
		status   int
		location string
		want     string
	}{
		{http.StatusMovedPermanently, loc, "301 Moved Permanently: redirect to http://mallory:xxxxx@" + host + "/steal?token=xxxxx&id=xxxxx&flag=xxxxx#xxxxx not followed"},
		{http.StatusFound, loc, "302 Found: redirect to"},
		{http.StatusSeeOther, loc, "303 See Other: redirect to"},
		{http.StatusTemporaryRedirect, loc, "307 Temporary Redirect: redirect to"},
		{http.StatusPermanentRedirect, loc, "308 Permanent Redirect: redirect to"},
		{http.StatusFound, "/elsewhere", "302 Found: redirect to /elsewhere not followed"},
		{http.StatusFound, "", "302 Found: redirect without a Location not followed"},
		{http.StatusFound, "http://h/%zz", "302 Found: redirect to " + secure.Withheld + " not followed"},
		// a password with a '/' in it: a parser reads "u:12" as the host
		// and the rest as the path, so only the one redaction withholds it
		{http.StatusFound, "http://u:12/34s3cret@evil/x", "302 Found: redirect to " + secure.Withheld + " not followed"},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status)+" "+tc.location, func(t *testing.T) {
			rc := recvtest.New(t, func(w http.ResponseWriter, _ *http.Request) {
				if tc.location != "" {
					w.Header().Set("Location", tc.location)
				}
				w.WriteHeader(tc.status)
			})
			e := testEffect(t, rc.Server.URL, 5*time.Second)
			r := &sink.Record{Topic: "orders", Value: []byte(`{"order_id":"o1"}`), Headers: []sink.Header{{Key: "auth", Value: []byte("h")}}}
			err := e.Do(context.Background(), "o1", r)
			switch {
			case err == nil:
				t.Fatalf("a %d reply taken as success", tc.status)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			case strings.Contains(err.Error(), "s3cret"):
				t.Errorf("error %q holds the Location's password or query value", err)
			case errors.Is(err, sink.ErrRejected) || errors.Is(err, sink.ErrNotApplied):
				t.Errorf("error %q is not one to retry", err)
			}
			if reqs, _ := target.Calls(); len(reqs) != 0 {
				t.Errorf("the redirect was followed: %s %s reached the Location", reqs[0].Method, reqs[0].URL)
			}
		})
	}
}

// TestHTTPEffectURLUser: a user and password in the URL go as Basic
// authorization, as an http.Client sends them.
func TestHTTPEffectURLUser(t *testing.T) {
	rc := recvtest.New(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	e := testEffect(t, strings.Replace(rc.Server.URL, "http://", "http://svc:pw@", 1), 5*time.Second)
	if err := e.Do(context.Background(), "k", &sink.Record{Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	reqs, _ := rc.Calls()
	if user, pw, ok := reqs[0].BasicAuth(); !ok || user != "svc" || pw != "pw" {
		t.Errorf("Basic authorization %q %q %v, want svc and pw", user, pw, ok)
	}
}
