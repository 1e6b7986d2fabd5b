package admin_test

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/shardpipe/shardpipe/admin"
)

// TestIdleWarning: the idle warning names the group, its state, every
// other member with its client and host, and the session timeout.
func TestIdleWarning(t *testing.T) {
	i := admin.Idle{Group: "g", State: "Stable", Others: []admin.Member{{ID: "m1", ClientID: "shardpipe/devel@a", Host: "/10.0.0.1"},
		{ID: "m2", ClientID: "kgo", Host: "/10.0.0.2"}}}
	w := i.Warning("45s (--session-timeout)")
	want := []any{"group", "g", "state", "Stable", "other_members",
		"m1 (client shardpipe/devel@a, host /10.0.0.1); m2 (client kgo, host /10.0.0.2)", "session_timeout", "45s (--session-timeout)"}
	if w.Level != slog.LevelWarn || w.Message != admin.IdleWarning || !slices.Equal(w.Attrs, want) {
		t.Errorf("got %v %q %q, want WARN, IdleWarning, %q", w.Level, w.Message, w.Attrs, want)
	}
}
