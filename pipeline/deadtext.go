package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
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

// digest describes b by its length and SHA-256, as a placeholder's
// HeaderSourceKey and HeaderSourceValue do: "700000 bytes, sha256 <64 hex
// digits>". It costs a SHA-256 pass over b.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return strconv.Itoa(len(b)) + " bytes, sha256 " + hex.EncodeToString(sum[:])
}
