package orders

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends o's JSON to b and returns the extended buffer. The
// bytes are exactly what encoding/json's Marshal gives for o (field order,
// escaping of control, HTML and invalid UTF-8 characters, RFC 3339 times
// with nanoseconds; created_at left out when zero, note when empty), written
// without reflection or an allocation of its own. It fails only for a
// CreatedAt that RFC 3339 cannot hold (a year outside 0..9999), as Marshal
// does.
func (o Order) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"order_id":`...)
	b = appendString(b, o.OrderID)
	b = append(b, `,"customer":`...)
	b = appendString(b, o.Customer)
	b = append(b, `,"amount_cents":`...)
	b = strconv.AppendInt(b, o.AmountCents, 10)
	if !o.CreatedAt.IsZero() {
		b = append(b, `,"created_at":"`...)
		var err error
		if b, err = o.CreatedAt.AppendText(b); err != nil {
			return nil, fmt.Errorf("orders: order %s: created_at: %w", o.OrderID, err)
		}
		b = append(b, '"')
	}
	if o.Note != "" {
		b = append(b, `,"note":`...)
		b = appendString(b, o.Note)
	}
	return append(b, '}'), nil
}

// JSON returns o's JSON (AppendJSON); it panics when AppendJSON fails, which
// only a CreatedAt outside years 0..9999 makes it do.
func (o Order) JSON() []byte {
	b, err := o.AppendJSON(make([]byte, 0, 96+len(o.OrderID)+len(o.Customer)+len(o.Note)))
	if err != nil {
		panic(err)
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json does with
// HTML escaping on (its default): `"` and `\` escaped, \b \f \n \r \t by
// name, other control characters and < > & as \u00XX, each byte of invalid
// UTF-8 as \ufffd, and U+2028 and U+2029 as \u2028 and \u2029.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
