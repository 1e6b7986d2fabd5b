package sink

import "unicode/utf8"

// The JSON scanner of the hot path: it finds top-level fields of a JSON
// object in one pass over the value, validating all of it as encoding/json
// would, without building a map and without allocating. It answers only
// when the answer is plain; everything else (invalid JSON, a value that is
// not an object, a key with an escape or a non-ASCII byte, nesting deeper
// than maxScanDepth) is left to encoding/json (jsonFields, scalar), which
// then gives the result and the error it always gave.

// maxScanDepth is the deepest nesting the scanner follows (one bit per
// level). Deeper values go to encoding/json, which refuses nesting past
// 10,000 levels.
const maxScanDepth = 64

// span is where a field's value lies in the scanned value: [from, to).
// The zero span is a field not found (a value is never empty).
type span struct{ from, to int }

func (s span) found() bool { return s.to > s.from }

// scanFields scans value, a JSON object, and returns the spans of the
// values of its top-level fields named a and b (the last one of each name,
// as encoding/json's map keeps). ok is false when the scanner leaves value
// to encoding/json: then the spans mean nothing. When ok is true, value is
// valid JSON whose top level is an object, and a span not found is a field
// the object does not have.
func scanFields(value []byte, a, b string) (sa, sb span, ok bool) {
	i := skipSpace(value, 0)
	if i >= len(value) || value[i] != '{' {
		return span{}, span{}, false
	}
	i = skipSpace(value, i+1)
	if i < len(value) && value[i] == '}' {
		return sa, sb, skipSpace(value, i+1) == len(value)
	}
	for {
		// A key: plain ASCII only, so that its bytes are its decoded text.
		if i >= len(value) || value[i] != '"' {
			return span{}, span{}, false
		}
		from := i + 1
		for i = from; i < len(value); i++ {
			if c := value[i]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
				break
			}
		}
		if i >= len(value) || value[i] != '"' {
			return span{}, span{}, false
		}
		key := value[from:i]
		i = skipSpace(value, i+1)
		if i >= len(value) || value[i] != ':' {
			return span{}, span{}, false
		}
		i = skipSpace(value, i+1)
		from = i
		if i, ok = skipValue(value, i); !ok {
			return span{}, span{}, false
		}
		if string(key) == a {
			sa = span{from, i}
		}
		if string(key) == b {
			sb = span{from, i}
		}
		i = skipSpace(value, i)
		if i >= len(value) {
			return span{}, span{}, false
		}
		switch value[i] {
		case ',':
			i = skipSpace(value, i+1)
		case '}':
			return sa, sb, skipSpace(value, i+1) == len(value)
		default:
			return span{}, span{}, false
		}
	}
}

// skipValue returns the end of the JSON value that starts at value[i],
// checked as encoding/json checks it; ok is false when it is not valid or
// nests deeper than maxScanDepth.
func skipValue(value []byte, i int) (end int, ok bool) {
	var objects uint64 // bit d: the container at depth d is an object
	depth := 0
	for {
		// A value starts at i.
		if i >= len(value) {
			return i, false
		}
		switch c := value[i]; c {
		case '{', '[':
			if depth == maxScanDepth {
				return i, false
			}
			objects &^= 1 << depth
			if c == '{' {
				objects |= 1 << depth
			}
			depth++
			i = skipSpace(value, i+1)
			if i < len(value) && value[i] == c+2 { // '}' or ']'
				i, ok = i+1, true
				depth--
				break
			}
			if c == '{' {
				if i, ok = skipKey(value, i); !ok {
					return i, false
				}
			}
			continue
		case '"':
			i, ok = skipString(value, i)
		case 't':
			i, ok = skipLiteral(value, i, "true")
		case 'f':
			i, ok = skipLiteral(value, i, "false")
		case 'n':
			i, ok = skipLiteral(value, i, "null")
		default:
			i, ok = skipNumber(value, i)
		}
		if !ok {
			return i, false
		}
		// After a value: close containers, or go on to the next element.
		for {
			if depth == 0 {
				return i, true
			}
			i = skipSpace(value, i)
			if i >= len(value) {
				return i, false
			}
			object := objects>>(depth-1)&1 == 1
			c := value[i]
			if c == ',' {
				i = skipSpace(value, i+1)
				if object {
					if i, ok = skipKey(value, i); !ok {
						return i, false
					}
				}
				break
			}
			if object && c == '}' || !object && c == ']' {
				i++
				depth--
				continue
			}
			return i, false
		}
	}
}

// skipKey skips a nested object's key and its colon, and the space after.
func skipKey(value []byte, i int) (int, bool) {
	if i >= len(value) || value[i] != '"' {
		return i, false
	}
	i, ok := skipString(value, i)
	if !ok {
		return i, false
	}
	i = skipSpace(value, i)
	if i >= len(value) || value[i] != ':' {
		return i, false
	}
	return skipSpace(value, i+1), true
}

// skipString skips the string that starts at value[i] ('"'): any byte but
// a control character, and the escapes JSON allows. Like encoding/json's
// scanner it does not check UTF-8 here.
func skipString(value []byte, i int) (int, bool) {
	for i++; i < len(value); {
		// The common bytes first, in a tight loop.
		for i < len(value) && value[i] >= 0x20 && value[i] != '"' && value[i] != '\\' {
			i++
		}
		if i >= len(value) {
			break
		}
		switch c := value[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			if i+1 >= len(value) {
				return i, false
			}
			switch value[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(value) {
					return i, false
				}
				for _, h := range value[i+2 : i+6] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		default:
			i++
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skipNumber skips -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? at i.
func skipNumber(value []byte, i int) (int, bool) {
	if i < len(value) && value[i] == '-' {
		i++
	}
	switch {
	case i < len(value) && value[i] == '0':
		i++
	case i < len(value) && '1' <= value[i] && value[i] <= '9':
		i = skipDigits(value, i+1)
	default:
		return i, false
	}
	if i < len(value) && value[i] == '.' {
		j := skipDigits(value, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(value) && (value[i] == 'e' || value[i] == 'E') {
		i++
		if i < len(value) && (value[i] == '+' || value[i] == '-') {
			i++
		}
		j := skipDigits(value, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func skipDigits(value []byte, i int) int {
	for i < len(value) && '0' <= value[i] && value[i] <= '9' {
		i++
	}
	return i
}

func skipLiteral(value []byte, i int, lit string) (int, bool) {
	if len(value)-i < len(lit) || string(value[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// skipSpace skips JSON whitespace: space, tab, CR, LF.
func skipSpace(value []byte, i int) int {
	for i < len(value) {
		switch value[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// plainScalar returns the text of raw, a whole JSON value as scanFields
// found it, when it is a number (kept as written) or a string without
// escapes in valid UTF-8, which is its own decoded text; ok is false for
// everything else, which scalar decides.
func plainScalar(raw []byte) (string, bool) {
	switch c := raw[0]; {
	case c == '"':
		inner := raw[1 : len(raw)-1]
		for _, b := range inner {
			if b == '\\' {
				return "", false
			}
		}
		if !utf8.Valid(inner) {
			return "", false
		}
		return string(inner), true
	case c == '-' || '0' <= c && c <= '9':
		return string(raw), true
	}
	return "", false
}

// plainInt64 returns raw, a whole JSON value as scanFields found it, as an
// int64 when it is an integer literal that fits; ok is false for
// everything else, which strconv.ParseInt decides.
func plainInt64(raw []byte) (int64, bool) {
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	if len(raw) == 0 || len(raw) > 19 { // 19 digits fit a uint64
		return 0, false
	}
	var n uint64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	switch {
	case neg && n <= 1<<63:
		return -int64(n), true // 1<<63 wraps to math.MinInt64, as it should
	case !neg && n < 1<<63:
		return int64(n), true
	}
	return 0, false
}
