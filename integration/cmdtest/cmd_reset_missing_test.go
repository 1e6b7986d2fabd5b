package cmdtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdResetOffsetsMissingGroup: reset-offsets on a group that does not
// exist (a mistyped name) exits 3 naming the group and --create, and
// commits nothing (the group stays missing, so status still exits 3); with
// --create it moves the offsets and the group exists.
func TestCmdResetOffsetsMissingGroup(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	bin := itest.BuildShardpipe(t)
	topic := integration.CreateTopic(t, brokers, 2)
	group := integration.Group(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	reset := func(args ...string) (int, string) {
		return itest.RunCmd(ctx, bin, append([]string{"reset-offsets", "--brokers", strings.Join(brokers, ","),
			"--group", group, "--topic", topic, "--to", "earliest"}, args...)...)
	}
	for _, dry := range []bool{true, false} {
		var args []string
		if dry {
			args = append(args, "--dry-run")
		}
		code, out := reset(args...)
		if code != 3 || !strings.Contains(out, group) || !strings.Contains(out, "does not exist") || !strings.Contains(out, "--create") {
			t.Fatalf("reset-offsets (dry run %v) of a missing group: exit %d, want 3 naming the group and --create\n%s", dry, code, out)
		}
	}
	status := func() (int, string) {
		return itest.RunCmd(ctx, bin, "status", "--brokers", strings.Join(brokers, ","), "--group", group, "--topic", topic)
	}
	if code, out := status(); code != 3 {
		t.Fatalf("status after the refused reset: exit %d, want 3 (group still missing)\n%s", code, out)
	}
	if code, out := reset("--create"); code != 0 || !strings.Contains(out, "offsets moved") {
		t.Fatalf("reset-offsets --create: exit %d, want 0 and the moves\n%s", code, out)
	}
	if code, out := status(); code != 0 {
		t.Fatalf("status after reset-offsets --create: exit %d, want 0\n%s", code, out)
	}
}
