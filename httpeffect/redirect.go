package httpeffect

import (
	"net/http"

	"github.com/shardpipe/shardpipe/secure"
)

// redirectTarget describes a 3xx reply's Location for an error: "redirect
// to URL" as secure.RedactURL prints it (password, query values and
// fragment hidden; a Location that does not parse, or whose password may
// be cut apart, withheld whole), the one redaction every printed URL goes
// through, so that a signed or tokened Location never reaches a log.
func redirectTarget(h http.Header) string {
	loc := h.Get("Location")
	if loc == "" {
		return "redirect without a Location"
	}
	return "redirect to " + secure.RedactURL(loc)
}
