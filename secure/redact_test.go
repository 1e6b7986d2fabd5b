package secure_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/secure"
)

// TestRedactURL: a URL keeps its scheme, user, host, path and option
// names; passwords, query values and fragments are hidden; a URL that does
// not parse prints none of its text; each URL of a list is redacted; text
// that is no URL is kept.
func TestRedactURL(t *testing.T) {
	tests := []struct {
		in, want string
		secrets  []string // must not appear
	}{
		{"https://u:pw1@h:8443/p/q?token=tok1&x=1#frag1", "https://u:xxxxx@h:8443/p/q?token=xxxxx&x=xxxxx#xxxxx", []string{"pw1", "tok1", "frag1"}},
		{"http://h/hook?access_token=tok2", "http://h/hook?access_token=xxxxx", []string{"tok2"}},
		{"http://h/x?", "http://h/x", nil},
		{"redis://:s3cret@h1:26379?master_name=m&password=sentinelpw&addr=h2:26379", "redis://:xxxxx@h1:26379?master_name=xxxxx&password=xxxxx&addr=xxxxx", []string{"s3cret", "sentinelpw"}},
		{"redis://a:pwA@h1:1,redis://b:pwB@h2:2", "redis://a:xxxxx@h1:1,redis://b:xxxxx@h2:2", []string{"pwA", "pwB"}},
		{"redis://u:pa/ss@h:1", secure.Withheld, []string{"pa/ss", "ss@"}},
		{"redis://u:p%zzw@h:1", secure.Withheld, []string{"p%zzw"}},
		{"redis://u:pq?ss@h:1", secure.Withheld, []string{"pq?ss", "pq"}},
		{"redis://u:ph#ss@h:1", secure.Withheld, []string{"ph#ss", "ph"}},
		{"redis://:pw6@[::1:6379", secure.Withheld, []string{"pw6"}},
		{"redis://u:12/ss3cret@h:1", secure.Withheld, []string{"ss3cret", "12"}},
		{"redis://u:12?ss3cret@h:1", secure.Withheld, []string{"ss3cret", "12"}},
		{"redis://u:12#ss3cret@h:1", secure.Withheld, []string{"ss3cret", "12"}},
		{"https://u:pw@h/users/@me", secure.Withheld, []string{"pw@"}},
		{"redis://@?:pw@h", secure.Withheld, []string{"pw"}},
		{"redis://u:pw7@h:1/0?pool_size=-5", "redis://u:xxxxx@h:1/0?pool_size=xxxxx", []string{"pw7", "-5"}},
		{"127.0.0.1:6379", "127.0.0.1:6379", nil},
		{"a:1,b:2", "a:1,b:2", nil},
		{"pw8@h:1", "xxxxx@h:1", []string{"pw8"}},
		{"http://127.0.0.1:9464/readyz", "http://127.0.0.1:9464/readyz", nil},
		{"", "", nil},
	}
	for _, tt := range tests {
		got := secure.RedactURL(tt.in)
		if got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
		for _, s := range tt.secrets {
			if strings.Contains(got, s) {
				t.Errorf("RedactURL(%q) = %q shows %q", tt.in, got, s)
			}
		}
	}
}

// TestRedactError: the *url.Error of a failed net/http call and of a URL
// that does not parse print no password nor query value once redacted; the
// chain is kept for errors.Is and errors.As; other errors and nil are
// returned as they are.
func TestRedactError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: the call fails with a *url.Error naming the URL
	sentinel := errors.New("sentinel")
	_, callErr := http.Get("http://u:callpw@" + addr + "/x?token=calltok")
	_, parseErr := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://u:pa/rsepw@h/x?token=parsetok", nil)
	tests := []struct {
		name    string
		err     error
		secrets []string
	}{
		{"http call", fmt.Errorf("effect: %w: %w", callErr, sentinel), []string{"callpw", "calltok"}},
		{"parse", parseErr, []string{"rsepw", "parsetok"}},
		{"joined", errors.Join(sentinel, callErr), []string{"calltok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("no error to redact")
			}
			red := secure.RedactError(tt.err)
			for _, s := range tt.secrets {
				if !strings.Contains(tt.err.Error(), s) && s != "callpw" {
					t.Fatalf("the raw error %q lacks %q: the case tests nothing", tt.err, s)
				}
				if strings.Contains(red.Error(), s) {
					t.Errorf("redacted %q shows %q", red, s)
				}
			}
			var ue *url.Error
			if !errors.As(red, &ue) || errors.Is(tt.err, sentinel) != errors.Is(red, sentinel) {
				t.Errorf("redacted %q lost its chain", red)
			}
		})
	}
	if secure.RedactError(nil) != nil || secure.RedactError(sentinel) != sentinel {
		t.Error("nil or an error without a URL was changed")
	}
}
