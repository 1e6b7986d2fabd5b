package opshttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/shardpipe/shardpipe/secure"
)

// ErrNotReady is what Ask wraps when the probe answered, but not 200 OK.
var ErrNotReady = errors.New("opshttp: probe answered not OK")

// Ask asks the probe at url (a running shardpipe's /readyz or /healthz)
// and returns its body (at most 64 KiB). A probe that answers other than
// 200 OK is an error wrapping ErrNotReady, naming the url and the status,
// with the body still returned; one that does not answer within timeout
// (or ctx) is the transport's error. Errors name the url only as
// secure.RedactURL prints it. One GET request.
func Ask(ctx context.Context, url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, secure.RedactError(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, secure.RedactError(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("%w: %s answered %s", ErrNotReady, secure.RedactURL(url), resp.Status)
	}
	return body, err
}
