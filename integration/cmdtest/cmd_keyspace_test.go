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

// TestCmdKeySpace: run over two topics holding the same ten business keys,
// then replay of the second topic, on the real servers, with each
// --key-space. shared (the default): one key space for both topics, so the
// ledger holds 10 keys, run applies 10 and suppresses 10, and the replay
// suppresses all 10. per-topic: keys <ledger-prefix><topic>:<key>, so the
// ledger holds 20 keys (10 per topic), run applies all 20, and the replay,
// given the same --key-space, suppresses all 10 of its topic.
func TestCmdKeySpace(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	rdb := integration.NewRedisClient(t, addr)
	b := strings.Join(brokers, ",")
	tests := []struct {
		space                string // --key-space; "" for the default
		keys, applied, supps int64
		keyOf                func(topic, key string) string
	}{
		{space: "", keys: 10, applied: 10, supps: 10, keyOf: func(_, k string) string { return k }},
		{space: "per-topic", keys: 20, applied: 20, supps: 0, keyOf: func(topic, k string) string { return topic + ":" + k }},
	}
	for _, tc := range tests {
		name := tc.space
		if name == "" {
			name = "default-shared"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			ta, tb := integration.CreateTopic(t, brokers, 1), integration.CreateTopic(t, brokers, 1)
			itest.ProduceKeys(ctx, t, brokers, ta, 10)
			itest.ProduceKeys(ctx, t, brokers, tb, 10)
			prefix := integration.RedisPrefix(t, rdb) + "ledger:"
			space := []string{}
			if tc.space != "" {
				space = []string{"--key-space", tc.space}
			}
			run := itest.Start(t, "run", bin, append([]string{"run", "--brokers", b, "--topic", ta, "--topic", tb,
				"--group", integration.Group(t), "--redis", addr, "--ledger-prefix", prefix, "--on-poison", "stop",
				"--commit-interval", "100ms", "--report-interval", "50ms", "--log-format", "json"}, space...)...)
			run.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "applied")+itest.Num(m, "suppressed") == 20 })
			run.Signal(syscall.SIGTERM)
			sum := run.WaitLine(ctx, "summary", func(map[string]any) bool { return true })
			if code := run.Wait(ctx); code != 0 {
				t.Fatalf("run exit %d\n%s", code, run.Output())
			}
			if a, s := itest.Num(sum, "applied"), itest.Num(sum, "suppressed"); a != tc.applied || s != tc.supps {
				t.Fatalf("run applied %d suppressed %d, want %d and %d\n%s", a, s, tc.applied, tc.supps, run.Output())
			}
			if n := itest.CountRedisKeys(ctx, t, rdb, prefix+"*"); int64(n) != tc.keys {
				t.Fatalf("ledger holds %d keys under %s, want %d", n, prefix, tc.keys)
			}
			for _, topic := range []string{ta, tb} {
				key := prefix + tc.keyOf(topic, "k3")
				if n, err := rdb.Exists(ctx, key).Result(); err != nil || n != 1 {
					t.Fatalf("ledger key %s: exists=%d (%v), want 1", key, n, err)
				}
			}

			rep := itest.Start(t, "replay", bin, append([]string{"replay", "--brokers", b, "--topic", tb, "--id", integration.Group(t),
				"--from", "0", "--redis", addr, "--ledger-prefix", prefix, "--on-poison", "stop", "--log-format", "json"}, space...)...)
			p := rep.WaitLine(ctx, "replay partition", func(map[string]any) bool { return true })
			if code := rep.Wait(ctx); code != 0 {
				t.Fatalf("replay exit %d\n%s", code, rep.Output())
			}
			if a, s := itest.Num(p, "applied"), itest.Num(p, "suppressed"); a != 0 || s != 10 {
				t.Fatalf("replay of %s applied %d suppressed %d, want 0 and 10: it must use run's key space\n%s", tb, a, s, rep.Output())
			}
		})
	}
}
