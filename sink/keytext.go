package sink

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// Bounds of QuoteKey: a key up to quoteWhole bytes is quoted whole; a
// longer one by its first quotePrefix bytes.
const (
	quoteWhole  = 64
	quotePrefix = 32
)

// QuoteKey returns key as error and log texts name it: quoted (Go syntax,
// as %q) when it is at most 64 bytes; else its first 32 bytes quoted (cut
// back to a UTF-8 boundary) with "…" before the closing quote, then its
// length and the first 8 hex digits of its SHA-256, as in
// `"abc…" (700000 bytes, sha256 1a2b3c4d)`. Whatever the key, the text
// stays under 200 bytes, so an error that names a key fits a log line and
// a Kafka header. A short key costs a strconv.Quote; a long one also a
// SHA-256 pass over it.
func QuoteKey(key string) string {
	if len(key) <= quoteWhole {
		return strconv.Quote(key)
	}
	n := quotePrefix
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(key[i]) {
			n = i
			break
		}
	}
	sum := sha256.Sum256([]byte(key))
	q := strconv.Quote(key[:n])
	return q[:len(q)-1] + `…" (` + strconv.Itoa(len(key)) + " bytes, sha256 " + hex.EncodeToString(sum[:4]) + ")"
}
