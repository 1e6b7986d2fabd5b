package sink

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The claim's stored form is what encoding/json makes of Claim; these
// functions write and read that same form without reflection, because the
// ledger encodes a claim for every record and, on a replay, reads one back
// for every suppressed record. A test keeps them equal to encoding/json.

// appendClaim appends c's JSON to b, byte for byte what json.Marshal(c)
// writes. It reports false for a time encoding/json refuses (a year
// outside 0-9999).
func appendClaim(b []byte, c Claim) ([]byte, bool) {
	if y := c.At.Year(); y < 0 || y > 9999 {
		return b, false
	}
	b = append(b, `{"topic":`...)
	b = appendJSONString(b, c.Topic)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(c.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, c.Offset, 10)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendInt(b, c.Epoch, 10)
	if c.Member != "" {
		b = append(b, `,"member":`...)
		b = appendJSONString(b, c.Member)
	}
	if c.Group != "" {
		b = append(b, `,"group":`...)
		b = appendJSONString(b, c.Group)
	}
	b = append(b, `,"at":"`...)
	b = c.At.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","state":`...)
	b = appendJSONString(b, c.State)
	if c.Trace != "" {
		b = append(b, `,"trace":`...)
		b = appendJSONString(b, c.Trace)
	}
	if c.Owner != "" {
		b = append(b, `,"owner":`...)
		b = appendJSONString(b, c.Owner)
	}
	return append(b, '}'), true
}

// appendJSONString appends s as encoding/json quotes it: plain printable
// ASCII as it is, anything else (escapes, HTML characters, non-ASCII)
// through encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	if plainJSON(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// plainJSON reports whether encoding/json writes s between quotes unchanged.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// claimPrefix appends the part of r's claim that Names compares, as
// appendClaim writes it: everything before `,"at":`.
func claimPrefix(b []byte, r *Record) []byte {
	b, _ = appendClaim(b, Claim{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Epoch: r.Epoch,
		Member: r.Member, Group: r.Group, At: time.Time{}})
	return b[:bytes.Index(b, []byte(`,"at":`))]
}

// priorKind is what a stored claim found at a record's ledger key says
// about that record.
type priorKind uint8

const (
	priorOther      priorKind = iota // a Ledger claim for another record
	priorOwn                         // a Ledger claim for r itself, same term (Claim.Names)
	priorSameRecord                  // a Ledger claim for r's topic, partition and offset, another term
	priorForeign                     // not a Ledger claim: ErrBadClaim, a misconfiguration
)

// classifyPrior says what the stored value prior at r's ledger key is: the
// same as DecodeClaim(prior) with state ClaimApplied and Names(r) or
// SameRecord(r), for every claim the Ledger writes. Those are compared as
// bytes (a claim for another record or term differs before `,"at":`, and
// its state is read from its end), and only a value of another form is
// decoded. scratch is reused for the comparison.
func classifyPrior(prior string, r *Record, scratch *[]byte) priorKind {
	want := claimPrefix((*scratch)[:0], r)
	*scratch = want
	if group, ok := canonicalOther(prior); ok && appliedTail(prior) {
		if hasPrefix(prior, want) && strings.HasPrefix(prior[len(want):], `,"at":"`) {
			return priorOwn
		}
		rec := want[:bytes.Index(want, []byte(`,"epoch":`))+len(`,"epoch":`)]
		if hasPrefix(prior, rec) && group == r.Group {
			return priorSameRecord
		}
		return priorOther
	}
	c, err := DecodeClaim(prior)
	switch {
	case err != nil || c.State != ClaimApplied || c.Owner != "":
		return priorForeign
	case c.Names(r):
		return priorOwn
	case c.SameRecord(r):
		return priorSameRecord
	}
	return priorOther
}

// hasPrefix is strings.HasPrefix(s, string(p)) without copying p into a
// string (the comparison of a string with a converted byte slice does not
// allocate).
func hasPrefix(s string, p []byte) bool { return len(s) >= len(p) && s[:len(p)] == string(p) }

// appliedTail reports whether prior, canonical up to `,"at":"`, ends as
// appendClaim ends a Ledger claim: a time without quotes, then
// `","state":"applied"}`, or `","state":"applied","trace":"..."}` with a
// plain trace string.
func appliedTail(prior string) bool {
	i := strings.Index(prior, `,"at":"`)
	rest := prior[i+len(`,"at":"`):]
	j := strings.IndexByte(rest, '"')
	if j <= 0 {
		return false
	}
	tail, ok := strings.CutPrefix(rest[j:], `","state":"`+ClaimApplied+`"`)
	if !ok {
		return false
	}
	if tail, ok = strings.CutPrefix(tail, `,"trace":`); ok {
		if tail, ok = plainString(tail); !ok {
			return false
		}
	}
	return tail == "}"
}

// canonicalOther reports whether prior has appendClaim's shape up to
// `,"at":"` with plain strings, so that a byte difference from a record's
// claimPrefix means a different topic, partition, offset, epoch, member or
// group; it returns the group the claim names.
func canonicalOther(prior string) (string, bool) {
	s, ok := strings.CutPrefix(prior, `{"topic":`)
	if !ok {
		return "", false
	}
	if s, ok = plainString(s); !ok {
		return "", false
	}
	for _, field := range []string{`,"partition":`, `,"offset":`, `,"epoch":`} {
		if s, ok = strings.CutPrefix(s, field); !ok {
			return "", false
		}
		if s, ok = integer(s); !ok {
			return "", false
		}
	}
	var group string
	for _, field := range []string{`,"member":`, `,"group":`} {
		rest, ok := strings.CutPrefix(s, field)
		if !ok {
			continue
		}
		if strings.HasPrefix(rest, `""`) { // omitempty never writes it
			return "", false
		}
		after, ok := plainString(rest)
		if !ok {
			return "", false
		}
		if field == `,"group":` {
			group = rest[1 : len(rest)-len(after)-1]
		}
		s = after
	}
	return group, strings.HasPrefix(s, `,"at":"`)
}

// plainString consumes a JSON string without escapes or characters that
// encoding/json would escape.
func plainString(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return s, false
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 || !plainJSON(s[1:1+end]) {
		return s, false
	}
	return s[end+2:], true
}

// integer consumes an integer as strconv.AppendInt writes it.
func integer(s string) (string, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start || (s[start] == '0' && (i-start > 1 || start > 0)) { // no leading zero, no -0
		return s, false
	}
	return s[i:], true
}
