package httpeffect_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/httpeffect"
	"github.com/shardpipe/shardpipe/internal/harness/recvtest"
	"github.com/shardpipe/shardpipe/sink"
)

// TestHTTPEffectResponseHeaderBound: a reply whose headers pass
// MaxResponseHeaderBytes fails the call (an error to retry, naming the
// bound); one within it succeeds.
func TestHTTPEffectResponseHeaderBound(t *testing.T) {
	tests := []struct {
		name    string
		size    int // bytes of one reply header's value
		wantErr string
	}{
		{"within the bound", httpeffect.MaxResponseHeaderBytes / 2, ""},
		{"past the bound", httpeffect.MaxResponseHeaderBytes + 1, "exceeded 65536 bytes"},
		{"far past the bound", 4 << 20, "exceeded 65536 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := recvtest.New(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("X-Big", strings.Repeat("b", tc.size))
				w.WriteHeader(http.StatusOK)
			})
			e := testEffect(t, rc.Server.URL, 5*time.Second)
			err := e.Do(context.Background(), "k", &sink.Record{Value: []byte("v")})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("%d-byte header: %v, want success", tc.size, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("%d-byte header: %v, want an error containing %q", tc.size, err, tc.wantErr)
			}
		})
	}
}
