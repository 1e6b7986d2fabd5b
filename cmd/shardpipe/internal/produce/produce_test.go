package produce

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestLines: blank lines are skipped, each order is returned in order, and
// a bad line is an error naming the source and the line number.
func TestLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		keys []string
		err  string // "" when the source ends with io.EOF
	}{
		{"two orders", `{"order_id":"a"}` + "\n" + `{"order_id":"b"}` + "\n", []string{"a", "b"}, ""},
		{"blank lines", "\n" + `{"order_id":"a"}` + "\n\n", []string{"a"}, ""},
		{"bad line", `{"order_id":"a"}` + "\nnot json\n", []string{"a"}, "in.jsonl line 2:"},
		{"empty", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := Lines(strings.NewReader(tt.in), "in.jsonl")
			var keys []string
			var err error
			for {
				var l struct{ Key string }
				ln, e := next()
				if e != nil {
					err = e
					break
				}
				l.Key = ln.Key
				keys = append(keys, l.Key)
			}
			if strings.Join(keys, ",") != strings.Join(tt.keys, ",") {
				t.Errorf("keys %q, want %q", keys, tt.keys)
			}
			if tt.err == "" && !errors.Is(err, io.EOF) || tt.err != "" && !strings.Contains(err.Error(), tt.err) {
				t.Errorf("end %v, want %q", err, tt.err)
			}
		})
	}
}
