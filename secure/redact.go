package secure

import (
	"net/url"
	"strconv"
	"strings"
)

// Hidden is what RedactURL prints in place of a password, a query value
// or a fragment.
const Hidden = "xxxxx"

// Withheld is what RedactURL prints in place of a URL that does not
// parse, or that holds an '@' after its host: none of its text, which may
// hold a password cut apart at a '/', '?' or '#'.
const Withheld = "(URL withheld: it does not parse, or a password in it may be cut apart)"

// RedactURL returns s fit for a message, a log line, a status page or a
// header: a URL keeps its scheme, user name, host, port and path, and each
// query option's name; a userinfo password, every query value and the
// fragment become Hidden. A URL that does not parse, or that holds an '@'
// after its host (CutApart: where a password holding '/', '?' or '#'
// unencoded leaves its rest, the start of it in the host or port), becomes
// Withheld, also when that '@' was meant (https://h/users/@me). A comma-separated list of URLs is redacted URL by URL. Text without "://"
// (host:port, a node list) is returned as it is, but for anything before
// an '@'. It costs one url.Parse per URL and allocates the result.
func RedactURL(s string) string {
	if !strings.Contains(s, "://") {
		if i := strings.LastIndexByte(s, '@'); i >= 0 {
			return Hidden + s[i:]
		}
		return s
	}
	parts := strings.Split(s, ",")
	if len(parts) > 1 && strings.Contains(strings.Join(parts[1:], ","), "://") {
		for i, p := range parts {
			parts[i] = RedactURL(p)
		}
		return strings.Join(parts, ",")
	}
	u, err := url.Parse(s)
	if err != nil || CutApart(s) {
		return Withheld
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), Hidden)
		}
	}
	if u.Opaque != "" {
		u.Opaque = Hidden // scheme:opaque has no host to keep
	}
	u.RawQuery = redactQuery(u.RawQuery)
	u.ForceQuery = false
	if u.Fragment != "" || u.RawFragment != "" {
		u.Fragment, u.RawFragment = Hidden, ""
	}
	return u.String()
}

// CutApart reports whether s, a URL, holds an '@' after its authority
// (the text between "://" and the first '/', '?' or '#'): where a user or
// password holding one of those delimiters unencoded leaves its rest, the
// start of it in the host and port.
func CutApart(s string) bool {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return false
	}
	end := strings.IndexAny(rest, "/?#")
	return end >= 0 && strings.Contains(rest[end:], "@")
}

// redactQuery keeps each option's name, in order, and hides its value.
func redactQuery(q string) string {
	if q == "" {
		return ""
	}
	var b strings.Builder
	for opt := range strings.SplitSeq(q, "&") {
		if opt == "" {
			continue
		}
		name, _, _ := strings.Cut(opt, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(name) + "=" + Hidden)
	}
	return b.String()
}

// RedactError returns err with every URL of every *url.Error in its chain
// (net/http's errors name the request's URL, url.Parse's the text given)
// passed through RedactURL in its text; errors.Is and errors.As see err's
// chain as before. nil stays nil, and an err without a *url.Error is
// returned as it is.
func RedactError(err error) error {
	var urls []string
	collectURLs(err, &urls)
	if len(urls) == 0 {
		return err
	}
	msg := err.Error()
	for _, raw := range urls {
		red := RedactURL(raw)
		msg = strings.ReplaceAll(msg, strconv.Quote(raw), strconv.Quote(red))
		msg = strings.ReplaceAll(msg, raw, red)
	}
	return &redactedError{msg: msg, err: err}
}

// collectURLs appends the URL of each *url.Error in err's tree.
func collectURLs(err error, urls *[]string) {
	for err != nil {
		if ue, ok := err.(*url.Error); ok && ue.URL != "" {
			*urls = append(*urls, ue.URL)
		}
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range e.Unwrap() {
				collectURLs(c, urls)
			}
			return
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		default:
			return
		}
	}
}

// redactedError is an error whose text was redacted; it unwraps to the
// error it was made from.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
