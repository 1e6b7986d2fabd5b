package cmdtest_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdRestartAfterKillExplainsWait: run is SIGKILLed (it cannot leave
// the group) and started again. Until the dead member's session times out
// the group keeps its partitions and the new run holds none; it logs once
// why, naming the other member (a shardpipe client) and the session
// timeout, before the partitions are assigned to it.
func TestCmdRestartAfterKillExplainsWait(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 2)
	integration.CreateDeadLetterTopic(t, brokers, topic, 2)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	args := []string{"run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", integration.Group(t),
		"--redis", addr, "--ledger-prefix", prefix + "ledger:", "--dlq-prefix", prefix + "own:", "--session-timeout", "10s",
		"--report-interval", "1s", "--log-format", "json"}
	run1 := itest.Start(t, "run 1", bin, args...)
	run1.WaitLine(ctx, "partitions assigned", func(map[string]any) bool { return true })
	run1.Signal(syscall.SIGKILL)
	run1.Wait(ctx)
	run2 := itest.Start(t, "run 2", bin, args...)
	defer func() {
		run2.Signal(syscall.SIGTERM)
		run2.Wait(ctx)
	}()
	const why = "holding no partitions yet: the group still has other members"
	w := run2.WaitLine(ctx, "", func(m map[string]any) bool {
		msg, _ := m["msg"].(string)
		if msg == "partitions assigned" {
			t.Fatalf("run 2 got its partitions without a line saying why it waited:\n%s", run2.Output())
		}
		return strings.HasPrefix(msg, why)
	})
	if others, _ := w["other_members"].(string); !strings.Contains(others, "client shardpipe/") || w["session_timeout"] != "10s (--session-timeout)" {
		t.Fatalf("line %v: want the killed shardpipe member and the 10s session timeout", w)
	}
	run2.WaitLine(ctx, "partitions assigned", func(map[string]any) bool { return true })
}
