package httpeffect

import (
	"net/http"
	"net/url"
	"strings"
)

// redirectTarget describes a 3xx reply's Location for an error: "redirect
// to URL" with the URL's password and query values hidden and its fragment
// dropped, so that a signed or tokened Location never reaches a log.
func redirectTarget(h http.Header) string {
	loc := h.Get("Location")
	if loc == "" {
		return "redirect without a Location"
	}
	u, err := url.Parse(loc)
	if err != nil {
		return "redirect to an unparsable Location"
	}
	return "redirect to " + redactURL(u)
}

// redactURL is u without its password (xxxxx), its query values (each
// xxxxx, names kept in order) and its fragment.
func redactURL(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			if name, _, ok := strings.Cut(p, "="); ok {
				parts[i] = name + "=xxxxx"
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	return c.Redacted()
}
