package main

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// escapeControl returns s with each control character (C0, DEL, C1) and
// each byte that is not UTF-8 escaped as strconv.Quote writes it (\n,
// \x1b, \u0085, \xff); everything else, quotes and backslashes too, is
// kept, so an ordinary message reads as it was written. A problem line
// printed through it holds no terminal escape and no line break.
func escapeControl(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || unicode.IsControl(r) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[0])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[0])&15, 16))
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}
