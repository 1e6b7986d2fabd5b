package orders

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestAppendJSONIsMarshal: the hand-written encoder gives exactly
// encoding/json's bytes for every field shape the producers use and for the
// strings encoding/json escapes (control characters, HTML, invalid UTF-8,
// the JavaScript line separators), and fails where Marshal fails.
func TestAppendJSONIsMarshal(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	east := time.FixedZone("east", 5*3600+30*60)
	tests := []struct {
		name string
		o    Order
	}{
		{"scenario order", Order{OrderID: "order-0-0007", Customer: "c0", AmountCents: 107}},
		{"generated order", Order{OrderID: "ord-1-0000042", Customer: "cust-007", AmountCents: 99_999, CreatedAt: at}},
		{"bench order", Order{OrderID: "bench-ord-000000007", Customer: "cust-007", AmountCents: 155,
			CreatedAt: at, Note: strings.Repeat("x", 80)}},
		{"zero", Order{}},
		{"negative amount", Order{OrderID: "o", AmountCents: -9_223_372_036_854_775_808}},
		{"nanoseconds and a zone", Order{OrderID: "o", CreatedAt: time.Date(2026, 3, 4, 5, 6, 7, 890_123_456, east)}},
		{"milliseconds", Order{OrderID: "o", CreatedAt: at.Add(1500 * time.Millisecond)}},
		{"year 0", Order{OrderID: "o", CreatedAt: time.Date(0, 1, 1, 0, 0, 0, 1, time.UTC)}},
		{"quotes and backslashes", Order{OrderID: `a"b\c`, Customer: `\"`}},
		{"control characters", Order{OrderID: "\x00\x01\b\f\n\r\t\x1f\x7f", Customer: "tab\there"}},
		{"html", Order{OrderID: "<script>&amp;</script>", Note: "a>b"}},
		{"invalid utf-8", Order{OrderID: "bad\xffbyte\xc3", Customer: "\xed\xa0\x80"}},
		{"line separators", Order{OrderID: "a\u2028b\u2029c", Note: "\u2027\u202a"}},
		{"unicode", Order{OrderID: "заказ-🍕-注文", Customer: "Zoë"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireSame(t, tt.o)
		})
	}
	for _, bad := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)} {
		o := Order{OrderID: "o", CreatedAt: bad}
		if _, err := json.Marshal(o); err == nil {
			t.Fatalf("Marshal accepted %v", bad)
		}
		if b, err := o.AppendJSON(nil); err == nil {
			t.Errorf("AppendJSON(%v) = %s, want an error as Marshal gives", bad, b)
		}
	}
}

// TestAppendJSONAppends: AppendJSON keeps what the buffer held.
func TestAppendJSONAppends(t *testing.T) {
	o := Order{OrderID: "o1", Customer: "c", AmountCents: 5}
	b, err := o.AppendJSON([]byte("prefix:"))
	if err != nil || string(b) != `prefix:{"order_id":"o1","customer":"c","amount_cents":5}` {
		t.Fatalf("AppendJSON = %s, %v", b, err)
	}
}

// TestGeneratedOrdersAreMarshal: every order the generator makes encodes as
// encoding/json would encode it.
func TestGeneratedOrdersAreMarshal(t *testing.T) {
	g := NewGenerator(GenConfig{Count: 500, Seed: 11})
	for {
		l, _, ok := g.Next()
		if !ok {
			break
		}
		var o Order
		if err := json.Unmarshal(l.Value, &o); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(l.Value, want) {
			t.Fatalf("generated %s\nMarshal   %s", l.Value, want)
		}
	}
}

// FuzzAppendJSON: for any strings, amount and time, AppendJSON and
// json.Marshal agree byte for byte, and on failing.
func FuzzAppendJSON(f *testing.F) {
	f.Add("order-1", "c1", int64(100), int64(1767225600), int64(0), "")
	f.Add("<&>\u2028", "\xff\x00", int64(-1), int64(0), int64(999), "note\"\\")
	f.Fuzz(func(t *testing.T, id, customer string, amount, sec, nsec int64, note string) {
		o := Order{OrderID: id, Customer: customer, AmountCents: amount, Note: note}
		if sec != 0 || nsec != 0 {
			o.CreatedAt = time.Unix(sec, nsec).UTC()
		}
		requireSame(t, o)
	})
}

func requireSame(t *testing.T, o Order) {
	t.Helper()
	want, werr := json.Marshal(o)
	got, gerr := o.AppendJSON(nil)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("Marshal error %v, AppendJSON error %v", werr, gerr)
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON %s\nMarshal    %s", got, want)
	}
}
