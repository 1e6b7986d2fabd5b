package sink

import (
	"errors"
	"strings"
	"testing"
)

func TestParseKeySource(t *testing.T) {
	for _, tt := range []struct {
		spec, want, errHas string
	}{
		{spec: "key", want: "key"},
		{spec: "header:order-id", want: "header:order-id"},
		{spec: "header:a:b", want: "header:a:b"},
		{spec: "json:order_id", want: "json:order_id"},
		{spec: "", errHas: `want "key"`},
		{spec: "Key", errHas: `want "key"`},
		{spec: "header", errHas: `want "key"`},
		{spec: "header:", errHas: "header name is empty"},
		{spec: "json:", errHas: "json name is empty"},
		{spec: "xml:id", errHas: `"xml:id"`},
	} {
		ks, err := ParseKeySource(tt.spec)
		if tt.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("ParseKeySource(%q) err = %v, want one containing %q", tt.spec, err, tt.errHas)
			}
			continue
		}
		if err != nil || ks.String() != tt.want {
			t.Errorf("ParseKeySource(%q) = %v, %v; want %s", tt.spec, ks, err, tt.want)
		}
	}
}

func TestExtract(t *testing.T) {
	hdr := func(kv ...string) []Header {
		var hs []Header
		for i := 0; i < len(kv); i += 2 {
			hs = append(hs, Header{Key: kv[i], Value: []byte(kv[i+1])})
		}
		return hs
	}
	for _, tt := range []struct {
		name, spec string
		rec        Record
		want       string // "" means ErrNoKey
	}{
		{"record key", "key", Record{Key: []byte("o1")}, "o1"},
		{"empty record key", "key", Record{}, ""},
		{"header", "header:id", Record{Headers: hdr("x", "1", "id", "o2")}, "o2"},
		{"first of repeated headers", "header:id", Record{Headers: hdr("id", "a", "id", "b")}, "a"},
		{"absent header", "header:id", Record{Headers: hdr("x", "1")}, ""},
		{"empty header", "header:id", Record{Headers: hdr("id", "")}, ""},
		{"json string", "json:id", Record{Value: []byte(`{"id":"o3"}`)}, "o3"},
		{"json escaped string", "json:id", Record{Value: []byte(`{"id":"a\u00e9\"b"}`)}, `aé"b`},
		{"json integer", "json:id", Record{Value: []byte(`{"id": 42 }`)}, "42"},
		{"json number kept as written", "json:id", Record{Value: []byte(`{"id":-1.50e3}`)}, "-1.50e3"},
		{"json empty string", "json:id", Record{Value: []byte(`{"id":""}`)}, ""},
		{"json null", "json:id", Record{Value: []byte(`{"id":null}`)}, ""},
		{"json bool", "json:id", Record{Value: []byte(`{"id":true}`)}, ""},
		{"json object", "json:id", Record{Value: []byte(`{"id":{"a":1}}`)}, ""},
		{"json missing", "json:id", Record{Value: []byte(`{"other":"x"}`)}, ""},
		{"json nested is not top level", "json:id", Record{Value: []byte(`{"x":{"id":"o"}}`)}, ""},
		{"not json", "json:id", Record{Value: []byte(`id=o4`)}, ""},
		{"json array", "json:id", Record{Value: []byte(`["id"]`)}, ""},
		{"json top-level null", "json:id", Record{Value: []byte(`null`)}, ""},
		{"no value", "json:id", Record{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ks, err := ParseKeySource(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			tt.rec.Topic, tt.rec.Partition, tt.rec.Offset = "orders", 2, 99
			got, err := ks.Extract(&tt.rec)
			if tt.want == "" {
				if !errors.Is(err, ErrNoKey) || got != "" {
					t.Fatalf("got %q, %v; want ErrNoKey", got, err)
				}
				if !strings.Contains(err.Error(), "orders/2@99") {
					t.Errorf("error %q does not name the record", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func FuzzKeySource(f *testing.F) {
	f.Add("key", []byte("k"), []byte(`{"id":"x"}`), "id", []byte("h"))
	f.Add("json:id", []byte(nil), []byte(`{"id":12}`), "id", []byte(nil))
	f.Add("json:id", []byte(nil), []byte(`{"id":"","id":"z"}`), "", []byte(nil))
	f.Add("header:h", []byte(nil), []byte(nil), "h", []byte(""))
	f.Add("json:a", []byte(nil), []byte(`{"a":[1,2]}`), "", []byte(nil))
	f.Add("json:id", []byte(nil), []byte(`{"id":"\ud800"}`), "", []byte(nil))
	f.Add("json:id", []byte(nil), []byte("{\"id\":\"\xff\"}"), "", []byte(nil))
	f.Fuzz(func(t *testing.T, spec string, key, value []byte, hname string, hvalue []byte) {
		ks, err := ParseKeySource(spec)
		if err != nil {
			return
		}
		if again, err := ParseKeySource(ks.String()); err != nil || again != ks {
			t.Fatalf("String round trip of %q: %v, %v", spec, again, err)
		}
		r := &Record{Topic: "t", Key: key, Value: value, Headers: []Header{{Key: hname, Value: hvalue}}}
		got, err := ks.Extract(r)
		switch {
		case err == nil && got == "":
			t.Fatalf("%s: empty key without error", ks)
		case err != nil && !errors.Is(err, ErrNoKey):
			t.Fatalf("%s: error %v does not wrap ErrNoKey", ks, err)
		case err != nil && got != "":
			t.Fatalf("%s: key %q with error %v", ks, got, err)
		case err == nil && ks.String() != "key" && !strings.HasPrefix(ks.String(), "header:") &&
			strings.Count(got, "\uFFFD") > strings.Count(strings.ToLower(string(value)), `\ufffd`)+strings.Count(string(value), "\uFFFD"):
			t.Fatalf("%s: key %q has a U+FFFD the value did not spell out: distinct keys would collapse", ks, got)
		}
	})
}

// TestJSONKeyRefusesReplacedRunes: invalid UTF-8 and lone surrogate escapes
// would all decode to U+FFFD and collapse into one business key; they are
// refused, while a spelled-out U+FFFD is a key like any other.
func TestJSONKeyRefusesReplacedRunes(t *testing.T) {
	ks, err := ParseKeySource("json:id")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		value string
		want  string // "" = ErrNoKey
	}{
		{`{"id":"\ud800"}`, ""},
		{`{"id":"a\udbffb"}`, ""},
		{"{\"id\":\"\xff\"}", ""},
		{`{"id":"\ufffd"}`, "\uFFFD"},
		{"{\"id\":\"\uFFFD\"}", "\uFFFD"},
		{`{"id":"\ud83d\ude00"}`, "\U0001F600"},
	}
	for _, tc := range cases {
		got, err := ks.Extract(&Record{Topic: "t", Value: []byte(tc.value)})
		if tc.want == "" {
			if !errors.Is(err, ErrNoKey) {
				t.Errorf("%q: key %q, %v; want ErrNoKey", tc.value, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: key %q, %v; want %q", tc.value, got, err, tc.want)
		}
	}
}
