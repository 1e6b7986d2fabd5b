package pgeffect

import "testing"

func TestQuoteTable(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		ok         bool
	}{
		{"shardpipe_inbox", `"shardpipe_inbox"`, true},
		{"ops.inbox", `"ops"."inbox"`, true},
		{`we"ird`, `"we""ird"`, true},
		{"", "", false},
		{"a.b.c", "", false},
		{"a.", "", false},
	} {
		got, err := quoteTable(tt.name)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("quoteTable(%q) = %q, %v; want %q, ok %v", tt.name, got, err, tt.want, tt.ok)
		}
	}
}
