package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPrintedURLsHideSecrets: what the command prints about a URL it was
// given (a Redis URL that does not parse, one with a bad option, a list of
// URLs, an --http-url it refuses, a probe that fails) names the part or
// the option at fault and shows no password and no query value.
func TestPrintedURLsHideSecrets(t *testing.T) {
	probe503 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer probe503.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()
	run := func(args ...string) []string { return append([]string{"run", "--topic", "orders"}, args...) }
	tests := []struct {
		name    string
		args    []string
		code    int
		want    string
		secrets []string
	}{
		{"slash in the password", run("--redis", "redis://u:pa/ssw0rd@h:1"), exitUsage, "the Redis URL does not parse (at the user or password; a password holding '/'", []string{"ssw0rd", "pa/"}},
		{"bad escape in the password", run("--redis", "redis://u:p%zzsecret@h:1"), exitUsage, "does not parse (at the user or password", []string{"zzsecret"}},
		{"question mark in the password", run("--redis", "redis://u:pq?secret9@h:1"), exitUsage, "does not parse (at the user or password", []string{"secret9"}},
		{"broken IPv6 host", run("--redis", "redis://:ipv6pw@[::1:6379"), exitUsage, "does not parse (at the host", []string{"ipv6pw"}},
		{"password cut at a slash, the rest a path", run("--redis", "redis://u:12/ss3cret@h:1"), exitUsage, "does not parse (at the user or password", []string{"ss3cret", "u:12"}},
		{"sentinel password option", run("--redis", "redis://:sentpw@h:26379?master_name=m&password=sentinelpw&pool_size=bogus7"), exitUsage, "option pool_size", []string{"sentpw", "sentinelpw", "bogus7"}},
		{"list of URLs", run("--redis", "redis://a:pwA@h1:1,redis://b:pwB@h2:2"), exitUsage, "a list of Redis URLs", []string{"pwA", "pwB"}},
		{"http-url token", run("--effect", "http", "--http-url", "ftp://h/x?token=httptok"), exitUsage, "token=xxxxx", []string{"httptok"}},
		{"probe not answering", []string{"probe", "--url", closed + "/readyz?token=probetok"}, exitUnavailable, "token=xxxxx", []string{"probetok"}},
		{"probe not ready", []string{"probe", "--url", probe503.URL + "/readyz?token=probetok"}, exitFailure, "token=xxxxx", []string{"probetok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := call(t, nil, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.want)
			}
			for _, s := range tt.secrets {
				if strings.Contains(stderr, s) {
					t.Errorf("%q: stderr shows %q: %s", tt.args, s, stderr)
				}
			}
		})
	}
}
