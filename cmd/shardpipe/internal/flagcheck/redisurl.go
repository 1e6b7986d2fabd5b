package flagcheck

import (
	"errors"
	"net/url"
	"strings"

	"github.com/shardpipe/shardpipe/secure"
)

// encodeHint is what a password holding one of the URL's delimiters needs.
const encodeHint = "a password holding '/', '?', '#', '@' or '%' must be percent-encoded (%2F, %3F, %23, %40, %25), or given with --redis-password-file"

// urlSyntax says which part of spec, a redis:// URL, keeps it from
// parsing, without any of its text: the part may hold a password cut
// apart at a delimiter.
func urlSyntax(spec string) error {
	if secure.RedactURL(spec) != secure.Withheld {
		return nil
	}
	return errors.New("the Redis URL does not parse (at " + brokenPart(spec) + ")")
}

// brokenPart names the first part of spec that does not parse; an '@'
// after the authority (secure.CutApart) says a password was cut short at a
// delimiter it should have had encoded.
func brokenPart(spec string) string {
	if strings.ContainsFunc(spec, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "a control character"
	}
	scheme, rest, _ := strings.Cut(spec, "://")
	if _, err := url.Parse(scheme + "://h"); err != nil || scheme == "" {
		return "the scheme"
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	if secure.CutApart(spec) {
		return "the user or password; " + encodeHint
	}
	userinfo, hostport := "", authority
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		userinfo, hostport = authority[:i], authority[i+1:]
	}
	if _, err := url.Parse("redis://" + userinfo + "@h"); userinfo != "" && err != nil {
		return "the user or password; " + encodeHint
	}
	if _, err := url.Parse("redis://" + hostport); err != nil {
		switch host, port := splitHostPort(hostport); {
		case strings.HasPrefix(host, "["):
			return "the host: an IPv6 address goes in [brackets], its port after them"
		case port != "":
			return "the port"
		}
		return "the host"
	}
	path := tail
	if i := strings.IndexAny(tail, "?#"); i >= 0 {
		path = tail[:i]
	}
	if _, err := url.Parse("redis://h" + path); err != nil {
		return "the path"
	}
	return "the query"
}

// splitHostPort cuts hostport at the colon before its port, if any,
// keeping an IPv6 literal's brackets (unbalanced or not) on the host.
func splitHostPort(hostport string) (host, port string) {
	i := strings.LastIndexByte(hostport, ':')
	if i < 0 || strings.LastIndexByte(hostport, ']') > i {
		return hostport, ""
	}
	return hostport[:i], hostport[i+1:]
}
