package httpeffect_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/httpeffect"
	"github.com/shardpipe/shardpipe/internal/harness/recvtest"
	"github.com/shardpipe/shardpipe/sink"
)

// TestHTTPEffectErrorsHideTheURLsSecrets: a token in the URL's query (or a
// password in its userinfo) appears in no error of New or Do: not in a
// refused reply's, not in net/http's *url.Error of a refused connection,
// whose sentinels (sink.ErrNotApplied) are kept.
func TestHTTPEffectErrorsHideTheURLsSecrets(t *testing.T) {
	const tok, pw = "qtok3n", "s3cretpw"
	refuse := recvtest.New(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://u:" + pw + "@" + l.Addr().String() + "/charge?token=" + tok
	l.Close()
	tests := []struct {
		name       string
		url        string
		notApplied bool
	}{
		{"refused reply", refuse.Server.URL + "/charge?token=" + tok, false},
		{"refused connection", closed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := httpeffect.New(tt.url, httpeffect.Timeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			err = e.Do(context.Background(), "k", &sink.Record{Value: []byte("v")})
			if err == nil || strings.Contains(err.Error(), tok) || strings.Contains(err.Error(), pw) ||
				!strings.Contains(err.Error(), "token=") || errors.Is(err, sink.ErrNotApplied) != tt.notApplied {
				t.Errorf("Do: %v; want an error naming the option token, not its value nor the password (not applied: %v)", err, tt.notApplied)
			}
		})
	}
	if _, err := httpeffect.New("ftp://h/x?token=" + tok); err == nil || strings.Contains(err.Error(), tok) {
		t.Errorf("New: %v; want an error without the token", err)
	}
}
