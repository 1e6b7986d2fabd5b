package sink

import (
	"bytes"
	"fmt"
	"strings"
)

// KeySource says where a record's business key comes from. The zero value
// is the record key. It is a small value, safe to copy and to share.
type KeySource struct {
	kind keyKind
	name string
}

type keyKind uint8

const (
	fromKey keyKind = iota
	fromHeader
	fromJSON
)

// ParseKeySource parses a key source spec: "key" (the record key),
// "header:NAME" (the first header named NAME) or "json:FIELD" (a top-level
// field of the value, a JSON object). NAME and FIELD are taken verbatim and
// must not be empty. The error names what is wrong with spec.
func ParseKeySource(spec string) (KeySource, error) {
	kind, name, hasColon := strings.Cut(spec, ":")
	switch {
	case spec == "key":
		return KeySource{kind: fromKey}, nil
	case hasColon && kind == "header" && name != "":
		return KeySource{kind: fromHeader, name: name}, nil
	case hasColon && kind == "json" && name != "":
		return KeySource{kind: fromJSON, name: name}, nil
	case hasColon && (kind == "header" || kind == "json"):
		return KeySource{}, fmt.Errorf("sink: key source %q: %s name is empty, want %q", spec, kind, kind+":NAME")
	}
	return KeySource{}, fmt.Errorf("sink: key source %q: want \"key\", \"header:NAME\" or \"json:FIELD\"", spec)
}

// String returns the spec that ParseKeySource accepts for s.
func (s KeySource) String() string {
	switch s.kind {
	case fromHeader:
		return "header:" + s.name
	case fromJSON:
		return "json:" + s.name
	}
	return "key"
}

// Extract returns r's business key, never empty. It fails with an error
// wrapping ErrNoKey and naming the record when the key, header or field is
// absent or empty, or the field is not a JSON string or number. A number is
// kept as written (1.0 and 1 are different keys). A json source reads the
// value in one pass, O(len(Value)), and allocates only the key when the
// object's keys and the field's string are plain (no escapes, ASCII keys);
// other values are decoded by encoding/json, with the same result.
func (s KeySource) Extract(r *Record) (string, error) {
	var key string
	switch s.kind {
	case fromKey:
		key = string(r.Key)
	case fromHeader:
		i := headerIndex(r.Headers, s.name)
		if i < 0 {
			return "", fmt.Errorf("%w at %s: no header %q", ErrNoKey, r.at(), s.name)
		}
		key = string(r.Headers[i].Value)
	case fromJSON:
		v, err := jsonScalar(r.Value, s.name)
		if err != nil {
			return "", fmt.Errorf("%w at %s: %w", ErrNoKey, r.at(), err)
		}
		key = v
	}
	if key == "" {
		return "", fmt.Errorf("%w at %s: %s is empty", ErrNoKey, r.at(), s)
	}
	return key, nil
}

func headerIndex(hs []Header, name string) int {
	for i := range hs {
		if hs[i].Key == name {
			return i
		}
	}
	return -1
}

// trimmed is bytes.TrimSpace for JSON whitespace only.
func trimmed(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }
