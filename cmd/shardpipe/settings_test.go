package main

import (
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
)

// TestSettingsEnv: the flag groups of cmd/shardpipe/internal/settings name the same
// environment variables in their problems as the command reads.
func TestSettingsEnv(t *testing.T) {
	if env != settings.Env {
		t.Fatalf("cmd reads variables %sNAME, settings names %sNAME in its problems", env, settings.Env)
	}
	code, _, stderr := call(t, nil, "run", "--topic", "t", "--ttl", "0s", "--commit-every", "-1")
	for _, want := range []string{"--ttl (SHARDPIPE_TTL) 0s: want 1ms to 87600h", "--commit-every (SHARDPIPE_COMMIT_EVERY) -1: want 0 to 1000000 (0: off)"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("run: exit %d, want %d and %q in:\n%s", code, exitUsage, want, stderr)
		}
	}
}
