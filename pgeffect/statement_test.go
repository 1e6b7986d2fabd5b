package pgeffect

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/sink"
)

func TestStatementNames(t *testing.T) {
	for _, tt := range []struct {
		sql  string
		want []string
	}{
		{"INSERT INTO t (a, b) VALUES (@order_id, @amount_cents)", []string{"order_id", "amount_cents"}},
		{"UPDATE t SET n = @n, m = @n + @m1 WHERE k = @k", []string{"n", "m1", "k"}},
		{"SELECT '@notme', \"@col\", @yes -- @comment\n /* @c2 */ , $$@d$$", []string{"yes"}},
		{"SELECT @a::int, @_b", []string{"a", "_b"}},
		{"SELECT 1", nil},
	} {
		s, err := NewStatement(tt.sql)
		if err != nil {
			t.Fatalf("%q: %v", tt.sql, err)
		}
		if got := s.Names(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: names %q, want %q", tt.sql, got, tt.want)
		}
	}
}

func TestStatementArgs(t *testing.T) {
	s, err := NewStatement("INSERT INTO t VALUES (@id, @amount, @tags, @note, @ok)")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, value string
		want        map[string]any
		missing     string // the field the error names; "" with want
	}{
		{"all", `{"id":"o1","amount":120,"tags":["a"],"note":null,"ok":true,"extra":1}`,
			map[string]any{"id": "o1", "amount": "120", "tags": `["a"]`, "note": nil, "ok": "true"}, ""},
		{"missing", `{"id":"o1","amount":1,"tags":[],"ok":false}`, nil, `field "note" (the statement's @note) is missing`},
		{"not an object", `[1,2]`, nil, "not a JSON object"},
		{"not JSON", `x`, nil, "not a JSON object"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.args([]byte(tt.value))
			if tt.want != nil {
				if err != nil || !reflect.DeepEqual(map[string]any(got), tt.want) {
					t.Fatalf("args = %v, %v; want %v", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, sink.ErrBadValue) || !strings.Contains(err.Error(), tt.missing) {
				t.Fatalf("err = %v; want sink.ErrBadValue naming %q", err, tt.missing)
			}
		})
	}
}
