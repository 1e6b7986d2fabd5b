package main

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/shardpipe/shardpipe/admin"
)

// TestIdleLine: the idle warning names the group, its state, every other
// member with its client and host, and the session timeout; the sentence
// is the command's, the fields admin's.
func TestIdleLine(t *testing.T) {
	i := admin.Idle{Group: "g", State: "Stable", Others: []admin.Member{{ID: "m1", ClientID: "shardpipe/devel@a", Host: "/10.0.0.1"},
		{ID: "m2", ClientID: "kgo", Host: "/10.0.0.2"}}}
	w := idleLine(i, "45s (--session-timeout)")
	want := []any{"group", "g", "state", "Stable", "other_members",
		"m1 (client shardpipe/devel@a, host /10.0.0.1); m2 (client kgo, host /10.0.0.2)", "session_timeout", "45s (--session-timeout)"}
	if w.Level != slog.LevelWarn || w.Message != idleWarning || !slices.Equal(w.Attrs, want) {
		t.Errorf("got %v %q %q, want WARN, idleWarning, %q", w.Level, w.Message, w.Attrs, want)
	}
}
