package sink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The oracle: the encoding/json implementation that jsonScalar and
// Totals.Args had before the scanner, kept here as it was, so that the
// tests compare the scanner with it and not with its own fallback.

func oracleFields(value []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(value, &m); err != nil {
		return nil, fmt.Errorf("value is not a JSON object: %w", err)
	}
	if m == nil {
		return nil, errors.New("value is JSON null, not an object")
	}
	return m, nil
}

func oracleScalar(field string, raw json.RawMessage) (string, error) {
	raw = bytes.Trim(raw, " \t\r\n")
	if len(raw) == 0 {
		return "", fmt.Errorf("field %q: %w", field, errNotScalar)
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("field %q: %w", field, err)
		}
		if !utf8.Valid(raw) {
			return "", fmt.Errorf("field %q is not valid UTF-8", field)
		}
		spelled := bytes.Count(raw, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(raw), []byte(`\ufffd`))
		if strings.Count(s, "\uFFFD") != spelled {
			return "", fmt.Errorf("field %q holds a lone UTF-16 surrogate escape", field)
		}
		return s, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return string(raw), nil
	}
	return "", fmt.Errorf("field %q is %s: %w", field, raw, errNotScalar)
}

func oracleJSONScalar(value []byte, field string) (string, error) {
	m, err := oracleFields(value)
	if err != nil {
		return "", err
	}
	raw, ok := m[field]
	if !ok {
		return "", fmt.Errorf("no field %q", field)
	}
	return oracleScalar(field, raw)
}

func oracleTotalsArgs(t Totals, r *Record) ([]string, []any, error) {
	m, err := oracleFields(r.Value)
	if err != nil {
		return nil, nil, err
	}
	raw, ok := m[t.GroupField]
	if !ok {
		return nil, nil, fmt.Errorf("no field %q", t.GroupField)
	}
	group, err := oracleScalar(t.GroupField, raw)
	if err != nil {
		return nil, nil, err
	}
	if group == "" {
		return nil, nil, fmt.Errorf("field %q is empty", t.GroupField)
	}
	raw, ok = m[t.AmountField]
	if !ok {
		return nil, nil, fmt.Errorf("no field %q", t.AmountField)
	}
	raw = bytes.Trim(raw, " \t\r\n")
	amount, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) {
			err = ne.Err
		}
		return nil, nil, fmt.Errorf("field %q is %s, not an int64: %w", t.AmountField, raw, err)
	}
	return []string{t.Hash}, []any{group, amount}, nil
}

// sameAsOracle fails t unless jsonScalar and Totals.Args give for value
// exactly what the encoding/json implementation gives: the same strings,
// the same typed arguments, the same errors.
func sameAsOracle(t *testing.T, value []byte, a, b string) {
	t.Helper()
	for _, f := range []string{a, b} {
		got, err := jsonScalar(value, f)
		want, werr := oracleJSONScalar(value, f)
		if got != want || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("jsonScalar(%q, %q) = %q, %v\nencoding/json: %q, %v", value, f, got, err, want, werr)
		}
	}
	tot := Totals{Hash: "h", GroupField: a, AmountField: b}
	r := &Record{Topic: "t", Value: value}
	keys, args, err := tot.Args(r, "k")
	wkeys, wargs, werr := oracleTotalsArgs(tot, r)
	if !reflect.DeepEqual(keys, wkeys) || !reflect.DeepEqual(args, wargs) || fmt.Sprint(err) != fmt.Sprint(werr) {
		t.Fatalf("Totals%+v.Args(%q) = %q %#v %v\nencoding/json: %q %#v %v", tot, value, keys, args, err, wkeys, wargs, werr)
	}
}

// scanSeeds are values where a scanner is most likely to part from
// encoding/json, for the fields "id" and "n".
var scanSeeds = []string{
	`{"id":"o1","n":5}`,
	` {"id" : "o1" , "n" : 5 } `,
	"\t{\r\n\"id\"\n:\"o1\",\"n\":-5}\n",
	`{}`, `{ }`, `{"id":"o1"}`, `{"n":1}`,
	`{"id":"a","id":"b","n":1,"n":2}`,          // duplicates: the last wins
	`{"id":{"x":1},"id":"late","n":[1],"n":3}`, // the last wins over a non-scalar
	`{"id":"early","id":null,"n":3}`,           // and a non-scalar last wins too
	`{"id":"o1","n":5,}`, `{"id":"o1",,"n":5}`, `{"id":"o1" "n":5}`, `{"id"}`, `{"id":}`, `{:1}`, `{'id':1}`,
	`{"order\u005fid":"o1","i\u0064":"esc","n":1}`, // escaped keys match
	`{"\u0069d":"x","id":"y","n":1}`, `{"id":"y","\u0069d":"x","n":1}`,
	`{"id":"a\u00e9\"b","n":1}`, `{"id":"a\/b\\c\b\f\n\r\t","n":1}`,
	`{"id":"\ud800","n":1}`, `{"id":"\udc00x","n":1}`, `{"id":"\ud83d\ude00","n":1}`, `{"id":"\uFFFD","n":1}`, `{"id":"\ufffd\ud800","n":1}`,
	"{\"id\":\"\xff\",\"n\":1}", "{\"id\":\"\xef\xbf\xbd\",\"n\":1}", "{\"id\":\"\xc3\xa9\",\"n\":1}", "{\"id\":\"\xed\xa0\x80\",\"n\":1}",
	"{\"\xff\":\"x\",\"id\":\"o\",\"n\":1}", "{\"\xc3\xa9\":\"x\",\"id\":\"o\",\"n\":1}", "{\"x\":\"\xff\",\"id\":\"o\",\"n\":1}",
	"{\"id\":\"a\x01\",\"n\":1}", "{\"id\":\"a\x7f\",\"n\":1}", "{\"x\":\"\x1f\",\"id\":\"o\",\"n\":1}",
	`{"id":"\x","n":1}`, `{"id":"\u12","n":1}`, `{"id":"\u12g4","n":1}`, `{"id":"\`, `{"id":"`, `{"id":"o1`,
	`{"id":0,"n":0}`, `{"id":-0,"n":-0}`, `{"id":01,"n":1}`, `{"id":1.,"n":1}`, `{"id":.5,"n":1}`, `{"id":-,"n":1}`,
	`{"id":1e5,"n":1E+5}`, `{"id":1e,"n":1}`, `{"id":1.5e-3,"n":1.0}`, `{"id":+1,"n":1}`, `{"id":0x1,"n":1}`,
	`{"id":"o","n":9223372036854775807}`, `{"id":"o","n":-9223372036854775808}`,
	`{"id":"o","n":9223372036854775808}`, `{"id":"o","n":-9223372036854775809}`,
	`{"id":"o","n":99999999999999999999}`, `{"id":"o","n":18446744073709551616}`, `{"id":"o","n":1234567890123456789}`,
	`{"id":"o","n":"12"}`, `{"id":"o","n":null}`, `{"id":"o","n":true}`, `{"id":"o","n":12.0}`, `{"id":"o","n":1e2}`,
	`{"id":true,"n":1}`, `{"id":false,"n":1}`, `{"id":null,"n":1}`, `{"id":"","n":1}`, `{"id":[],"n":{}}`,
	`{"id":tru,"n":1}`, `{"id":nul,"n":1}`, `{"id":True,"n":1}`, `{"id":"o","n":1}x`, `{"id":"o","n":1}}`, `{"id":"o","n":1}{}`,
	`{"x":{"id":"nested"},"n":1}`, `{"x":[{"id":1},[[]],{}],"id":"o","n":1}`, `{"x":[1,],"id":"o","n":1}`, `{"x":[,1],"id":"o","n":1}`,
	`{"x":{"a":1,},"id":"o","n":1}`, `{"x":{"a" 1},"id":"o","n":1}`, `{"x":[1 2],"id":"o","n":1}`, `{"x":{1:2},"id":"o","n":1}`,
	`{"x":[}],"id":"o","n":1}`, `{"x":{]},"id":"o","n":1}`, `{"x":[{"a":[1,{"b":null}]}],"id":"o","n":1}`,
	`[1,2]`, `["id"]`, `null`, `"id"`, `5`, `true`, ``, ` `, `{`, `}`, `{"id":"o","n":1`, "\ufeff{\"id\":\"o\",\"n\":1}",
	strings.Repeat("[", 64) + strings.Repeat("]", 64),
	`{"x":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `,"id":"o","n":1}`,
	`{"x":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `,"id":"o","n":1}`,
	`{"x":` + strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70) + `,"id":"o","n":1}`,
	`{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `,"id":"o","n":1}`,
	`{"order_id":"ord-000000001","customer":"cust-001","amount_cents":100,"created_at":"2026-01-01T00:00:00Z","note":"xxxxxxxx"}`,
}

// FuzzJSONScan: on any value and any two field names, jsonScalar and
// Totals.Args accept, refuse and return exactly what the encoding/json
// implementation (the oracle above) does.
func FuzzJSONScan(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s), "id", "n")
	}
	f.Add([]byte(`{"order_id":"o","amount_cents":1}`), "order_id", "amount_cents")
	f.Add([]byte(`{"":"empty key","n":1}`), "", "n")
	f.Add([]byte(`{"id":"o","n":1}`), "id", "id")
	f.Add([]byte("{\"\xff\":\"o\",\"n\":1}"), "\ufffd", "n")
	f.Add([]byte(`{"\ud800":"o","n":1}`), "\ufffd", "n")
	f.Add([]byte(`{"é":"o","n":1}`), "é", "n")
	f.Fuzz(func(t *testing.T, value []byte, a, b string) {
		sameAsOracle(t, value, a, b)
	})
}

// TestJSONScan: what the scanner gives for the tricky values, said
// outright, and the same as encoding/json on every seed.
func TestJSONScan(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		id, idErr   string // jsonScalar(value, "id"): the key, or a part of the error
		n           int64  // Totals{GroupField: "id", AmountField: "n"}: the amount
		argsErr     string // or a part of its error
	}{
		{name: "plain", value: `{"id":"o1","n":5}`, id: "o1", n: 5},
		{name: "spaces", value: " {\"id\" :\t\"o1\" ,\r\n\"n\": -5 } ", id: "o1", n: -5},
		{name: "last duplicate wins", value: `{"id":"a","n":1,"id":"b","n":2}`, id: "b", n: 2},
		{name: "last duplicate wins over an object", value: `{"id":{"x":1},"id":"b","n":[],"n":2}`, id: "b", n: 2},
		{name: "a later null wins", value: `{"id":"a","id":null,"n":2}`, idErr: `field "id" is null`, argsErr: `field "id" is null`},
		{name: "escaped key", value: `{"i\u0064":"o2","n":3}`, id: "o2", n: 3},
		{name: "escaped key then plain", value: `{"i\u0064":"x","id":"y","n":3}`, id: "y", n: 3},
		{name: "plain key then escaped", value: `{"id":"y","i\u0064":"x","n":3}`, id: "x", n: 3},
		{name: "escaped value", value: `{"id":"a\u00e9\"b","n":1}`, id: `aé"b`, n: 1},
		{name: "non-ASCII value", value: "{\"id\":\"caf\xc3\xa9\",\"n\":1}", id: "café", n: 1},
		{name: "spelled U+FFFD", value: `{"id":"\ufffd","n":1}`, id: "\uFFFD", n: 1},
		{name: "invalid UTF-8 value", value: "{\"id\":\"\xff\",\"n\":1}", idErr: "not valid UTF-8", argsErr: "not valid UTF-8"},
		{name: "lone surrogate", value: `{"id":"\ud800","n":1}`, idErr: "lone UTF-16 surrogate", argsErr: "lone UTF-16 surrogate"},
		{name: "number kept as written", value: `{"id":-1.50e3,"n":1}`, id: "-1.50e3", n: 1},
		{name: "int64 max", value: `{"id":"o","n":9223372036854775807}`, id: "o", n: 9223372036854775807},
		{name: "int64 min", value: `{"id":"o","n":-9223372036854775808}`, id: "o", n: -9223372036854775808},
		{name: "past int64", value: `{"id":"o","n":9223372036854775808}`, id: "o", argsErr: "value out of range"},
		{name: "fraction amount", value: `{"id":"o","n":1.0}`, id: "o", argsErr: "invalid syntax"},
		{name: "string amount", value: `{"id":"o","n":"1"}`, id: "o", argsErr: "invalid syntax"},
		{name: "empty group", value: `{"id":"","n":1}`, id: "", argsErr: `field "id" is empty`},
		{name: "missing", value: `{"x":"o","n":1}`, idErr: `no field "id"`, argsErr: `no field "id"`},
		{name: "nested is not top level", value: `{"x":{"id":"o"},"n":1}`, idErr: `no field "id"`, argsErr: `no field "id"`},
		{name: "invalid after the fields", value: `{"id":"o","n":1,"x":[1,]}`, idErr: "not a JSON object", argsErr: "not a JSON object"},
		{name: "trailing garbage", value: `{"id":"o","n":1} x`, idErr: "not a JSON object", argsErr: "not a JSON object"},
		{name: "bad escape elsewhere", value: `{"id":"o","n":1,"x":"\q"}`, idErr: "not a JSON object", argsErr: "not a JSON object"},
		{name: "control byte elsewhere", value: "{\"id\":\"o\",\"n\":1,\"x\":\"\x01\"}", idErr: "not a JSON object", argsErr: "not a JSON object"},
		{name: "leading zero elsewhere", value: `{"id":"o","n":1,"x":01}`, idErr: "not a JSON object", argsErr: "not a JSON object"},
		{name: "deep but valid", value: `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `,"id":"o","n":1}`, id: "o", n: 1},
		{name: "too deep for encoding/json", value: `{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `,"id":"o","n":1}`,
			idErr: "exceeded max depth", argsErr: "exceeded max depth"},
		{name: "array", value: `["id"]`, idErr: "not a JSON object", argsErr: "not a JSON object"},
		{name: "null", value: `null`, idErr: "JSON null", argsErr: "JSON null"},
		{name: "empty", value: ``, idErr: "unexpected end", argsErr: "unexpected end"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsonScalar([]byte(tt.value), "id")
			if tt.idErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.idErr) {
					t.Errorf("jsonScalar = %q, %v; want an error with %q", got, err, tt.idErr)
				}
			} else if err != nil || got != tt.id {
				t.Errorf("jsonScalar = %q, %v; want %q", got, err, tt.id)
			}
			_, args, err := Totals{Hash: "h", GroupField: "id", AmountField: "n"}.Args(&Record{Value: []byte(tt.value)}, "k")
			if tt.argsErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.argsErr) {
					t.Errorf("Args = %v, %v; want an error with %q", args, err, tt.argsErr)
				}
			} else if err != nil || !reflect.DeepEqual(args, []any{tt.id, tt.n}) {
				t.Errorf("Args = %#v, %v; want [%q %d]", args, err, tt.id, tt.n)
			}
			sameAsOracle(t, []byte(tt.value), "id", "n")
		})
	}
	for _, s := range scanSeeds {
		sameAsOracle(t, []byte(s), "id", "n")
	}
}

// TestJSONScanAllocs: a bench order costs jsonScalar and the json key
// source only the key string, and Totals.Args the group string, the boxed group and amount and one
// allocation for the returned slices.
func TestJSONScanAllocs(t *testing.T) {
	recs := benchOrders(16)
	tot := Totals{Hash: "h", GroupField: "customer", AmountField: "amount_cents"}
	i := 0
	if n := testing.AllocsPerRun(200, func() {
		if _, err := jsonScalar(recs[i&15].Value, "order_id"); err != nil {
			t.Fatal(err)
		}
		i++
	}); n != 1 {
		t.Errorf("jsonScalar: %v allocations, want 1 (the key)", n)
	}
	ks, err := ParseKeySource("json:order_id")
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(200, func() {
		if _, err := ks.Extract(&recs[i&15]); err != nil {
			t.Fatal(err)
		}
		i++
	}); n != 1 {
		t.Errorf("KeySource json:order_id: %v allocations, want 1 (the key)", n)
	}
	if n := testing.AllocsPerRun(200, func() {
		if _, _, err := tot.Args(&recs[i&15], "k"); err != nil {
			t.Fatal(err)
		}
		i++
	}); n > 4 {
		t.Errorf("Totals.Args: %v allocations, want at most 4", n)
	}
}

// TestPlainInt64: the scanner's integer parse agrees with strconv at the
// edges of int64 and refuses what it leaves to strconv.
func TestPlainInt64(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-7", "255", "256", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "9999999999999999999", "-9999999999999999999",
		"18446744073709551615", "18446744073709551616", "12345678901234567890", "1.5", "1e3", "-", "00"} {
		n, ok := plainInt64([]byte(s))
		want, err := strconv.ParseInt(s, 10, 64)
		if ok && (err != nil || n != want) {
			t.Errorf("plainInt64(%s) = %d, strconv says %d, %v", s, n, want, err)
		}
		if !ok && err == nil {
			t.Errorf("plainInt64(%s) refused an int64 literal (%d)", s, want)
		}
	}
}
