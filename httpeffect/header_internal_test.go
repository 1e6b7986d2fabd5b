package httpeffect

import (
	"net/url"
	"testing"
)

func TestHeaderEncoding(t *testing.T) {
	tests := []struct {
		in        string
		value     string // headerValue
		name      string // headerName
		roundTrip bool
	}{
		{"order-42", "order-42", "order-42", true},
		{"0d9b7c1e-3f2a-4d5b-9e8f-112233445566", "0d9b7c1e-3f2a-4d5b-9e8f-112233445566", "0d9b7c1e-3f2a-4d5b-9e8f-112233445566", true},
		{"a b", "a%20b", "a%20b", true},
		{"50%", "50%25", "50%25", true},
		{"line\r\nInjected: 1", "line%0D%0AInjected:%201", "line%0D%0AInjected%3A%201", true},
		{"caf\xc3\xa9", "caf%C3%A9", "caf%C3%A9", true},
		{"\x00\xff", "%00%FF", "%00%FF", true},
		{"trace.id(x)", "trace.id(x)", "trace.id%28x%29", true},
	}
	for _, tc := range tests {
		if got := headerValue([]byte(tc.in)); got != tc.value {
			t.Errorf("headerValue(%q) = %q, want %q", tc.in, got, tc.value)
		}
		if got := headerName(tc.in); got != tc.name {
			t.Errorf("headerName(%q) = %q, want %q", tc.in, got, tc.name)
		}
		for _, enc := range []string{tc.value, tc.name} {
			if back, err := url.PathUnescape(enc); err != nil || back != tc.in {
				t.Errorf("url.PathUnescape(%q) = %q, %v; want %q", enc, back, err, tc.in)
			}
		}
	}
}
