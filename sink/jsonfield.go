package sink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

var errNotScalar = errors.New("not a string or number")

// jsonScalar returns a top-level string or number field of a JSON object.
// The common value (plain keys, the field a number or a string without
// escapes) takes one pass of scanFields and allocates only the result;
// anything else is decided by encoding/json (jsonFields, scalar), with the
// same results and errors.
func jsonScalar(value []byte, field string) (string, error) {
	if sp, _, ok := scanFields(value, field, field); ok && sp.found() {
		if s, ok := plainScalar(value[sp.from:sp.to]); ok {
			return s, nil
		}
	}
	m, err := jsonFields(value)
	if err != nil {
		return "", err
	}
	raw, ok := m[field]
	if !ok {
		return "", fmt.Errorf("no field %q", field)
	}
	return scalar(field, raw)
}

// jsonFields decodes the top level of a JSON object with encoding/json: the
// path for values the scanner leaves to it, and the one that says why a
// value is refused.
func jsonFields(value []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(value, &m); err != nil {
		return nil, fmt.Errorf("value is not a JSON object: %w", err)
	}
	if m == nil {
		return nil, errors.New("value is JSON null, not an object")
	}
	return m, nil
}

// scalar renders a JSON string or number as a Go string; numbers keep their
// literal text.
func scalar(field string, raw json.RawMessage) (string, error) {
	raw = trimmed(raw)
	if len(raw) == 0 {
		return "", fmt.Errorf("field %q: %w", field, errNotScalar)
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("field %q: %w", field, err)
		}
		// encoding/json turns invalid UTF-8 and lone surrogate escapes into
		// U+FFFD, which would collapse distinct keys into one. Refuse any
		// U+FFFD the literal did not spell out.
		if !utf8.Valid(raw) {
			return "", fmt.Errorf("field %q is not valid UTF-8", field)
		}
		spelled := bytes.Count(raw, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(raw), []byte(`\ufffd`))
		if strings.Count(s, "\uFFFD") != spelled {
			return "", fmt.Errorf("field %q holds a lone UTF-16 surrogate escape", field)
		}
		return s, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return string(raw), nil // json.Unmarshal already validated the literal
	}
	return "", fmt.Errorf("field %q is %s: %w", field, raw, errNotScalar)
}
