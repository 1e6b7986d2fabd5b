package sink

import (
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf8"
)

// FuzzTotalsArgs: decoding the totals effect's input from any value never
// panics; what it accepts agrees with encoding/json (the group is the
// field's string or number text, the amount the field's int64); and a value
// written by encoding/json from a valid group and any int64 round-trips.
func FuzzTotalsArgs(f *testing.F) {
	f.Add([]byte(`{"customer":"c1","amount_cents":250}`), "c1", int64(250))
	f.Add([]byte(`{"customer":7,"amount_cents":-3}`), "7", int64(-3))
	f.Add([]byte(`{"customer":"","amount_cents":1}`), "", int64(0))
	f.Add([]byte(`{"customer":"c","amount_cents":1.5}`), "c", int64(9223372036854775807))
	f.Add([]byte(`{"customer":"c","amount_cents":99999999999999999999}`), "\ufffd", int64(-9223372036854775808))
	f.Add([]byte(`{"customer":null,"amount_cents":"12"}`), "x", int64(1))
	f.Add([]byte(`[1,2]`), "\xff", int64(1))
	f.Add([]byte(`null`), "a\"b", int64(1))
	tot := Totals{Hash: "h", GroupField: "customer", AmountField: "amount_cents"}
	f.Fuzz(func(t *testing.T, value []byte, group string, amount int64) {
		r := &Record{Topic: "t", Value: value}
		keys, args, err := tot.Args(r, "k")
		if err == nil {
			if len(keys) != 1 || keys[0] != "h" || len(args) != 2 {
				t.Fatalf("Args(%q) = %q %v: want the hash and two args", value, keys, args)
			}
			g, ok := args[0].(string)
			if !ok || g == "" {
				t.Fatalf("Args(%q): group %#v is not a non-empty string", value, args[0])
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(value, &m) != nil {
				t.Fatalf("Args accepted %q, which encoding/json rejects", value)
			}
			n, perr := strconv.ParseInt(string(trimmed(m["amount_cents"])), 10, 64)
			if a, ok := args[1].(int64); !ok || perr != nil || a != n {
				t.Fatalf("Args(%q): amount %#v, the field says %d (%v)", value, args[1], n, perr)
			}
		}

		// Round trip of a value encoding/json wrote.
		if group == "" || !utf8.ValidString(group) {
			return
		}
		v, err := json.Marshal(map[string]any{"customer": group, "amount_cents": amount})
		if err != nil {
			t.Fatal(err)
		}
		_, args, err = tot.Args(&Record{Topic: "t", Value: v}, "k")
		if err != nil {
			t.Fatalf("Args(%s): %v", v, err)
		}
		if args[0] != group || args[1] != amount {
			t.Fatalf("Args(%s) = %v, want [%q %d]", v, args, group, amount)
		}
	})
}

// FuzzKeySourceRoundTrip: a key written into a header or a JSON field (by
// encoding/json) comes back out unchanged, for every valid non-empty key.
func FuzzKeySourceRoundTrip(f *testing.F) {
	f.Add("id", "order-1")
	f.Add("x y", "\u00e9\ufffd")
	f.Add("a\"b", "12")
	f.Add("k", "<&>")
	f.Fuzz(func(t *testing.T, name, key string) {
		if name == "" || key == "" || !utf8.ValidString(name) || !utf8.ValidString(key) {
			return
		}
		v, err := json.Marshal(map[string]string{name: key})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			spec string
			r    *Record
		}{
			{"json:" + name, &Record{Topic: "t", Value: v}},
			{"header:" + name, &Record{Topic: "t", Headers: []Header{{Key: "other", Value: []byte("x")}, {Key: name, Value: []byte(key)}}}},
			{"key", &Record{Topic: "t", Key: []byte(key)}},
		} {
			ks, err := ParseKeySource(tc.spec)
			if err != nil {
				t.Fatalf("ParseKeySource(%q): %v", tc.spec, err)
			}
			if got, err := ks.Extract(tc.r); err != nil || got != key {
				t.Fatalf("%s: Extract = %q, %v; want %q", tc.spec, got, err, key)
			}
		}
	})
}
