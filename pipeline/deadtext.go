package pipeline

import (
	"strconv"
	"unicode/utf8"
)

// maxErrorText bounds the error text a dead letter's HeaderError and the
// dead-letter log lines carry. Keys are named within 200 bytes
// (sink.QuoteKey); the bound holds whatever else a sink or an effect puts
// in its error.
const maxErrorText = 1024

// clipText returns s if it is at most n bytes, else its first bytes, cut
// back to a UTF-8 boundary, with "… (L bytes in all)": at most n bytes
// (the tail alone when n is shorter than it).
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	tail := "… (" + strconv.Itoa(len(s)) + " bytes in all)"
	cut := max(n-len(tail), 0)
	for i := cut; i > cut-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			cut = i
			break
		}
	}
	return s[:cut] + tail
}

// errorText is cause's text for a dead letter's header or a log line,
// within maxErrorText.
func errorText(cause error) string { return clipText(cause.Error(), maxErrorText) }
