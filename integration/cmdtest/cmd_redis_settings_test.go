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

// TestCmdRedisSettings: at start run and replay read the ledger Redis's
// appendonly, appendfsync, save and maxmemory-policy (CONFIG GET). An
// eviction policy other than noeviction, or no persistence at all
// (appendonly no and save ""), is refused with exit 2 naming the setting
// and the fix, unless the flag that accepts the risk is given; appendfsync
// everysec on a server without WAITAOF (Debian's Redis 7.0) starts with a
// warning naming the window; on Valkey (WAITAOF) it starts saying that
// commits wait for the fsync; a user whose ACL refuses CONFIG is told that
// the settings were not checked. Real servers: a private redis-server 7.0
// and a private valkey-server 9, set with CONFIG SET between the cases.
func TestCmdRedisSettings(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	rbin, vbin := itest.RedisBin(t), itest.ValkeyBin(t)
	bin := itest.BuildShardpipe(t)
	topic := integration.CreateTopic(t, brokers, 1)
	r7 := itest.StartServer(t, rbin)
	vk := itest.StartServer(t, vbin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := r7.C.Do(ctx, "ACL", "SETUSER", "noconfig", "on", ">pw", "~*", "+@all", "-config").Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	tests := []struct {
		name     string
		srv      *itest.Server
		settings string // CONFIG SET pairs, "" values as ''
		cmd      string // run or replay
		redis    string // --redis (default the server's address)
		flags    []string
		code     int      // 2: refused; 0: started (then stopped with SIGTERM)
		want     []string // in the output
		not      []string // not in the output
	}{
		{name: "allkeys-lru refused", srv: r7, settings: "maxmemory-policy allkeys-lru", cmd: "run", code: 2,
			want: []string{"maxmemory-policy is allkeys-lru", "maxmemory-policy noeviction", "--redis-allow-eviction"}},
		{name: "allkeys-lru allowed", srv: r7, settings: "maxmemory-policy allkeys-lru", cmd: "run",
			flags: []string{"--redis-allow-eviction"}, want: []string{"maxmemory-policy is allkeys-lru"}},
		{name: "volatile-lru refused", srv: r7, settings: "maxmemory-policy volatile-lru", cmd: "run", code: 2,
			want: []string{"maxmemory-policy is volatile-lru", "--redis-allow-eviction"}},
		{name: "volatile-lru allowed", srv: r7, settings: "maxmemory-policy volatile-lru", cmd: "run",
			flags: []string{"--redis-allow-eviction"}, want: []string{"maxmemory-policy is volatile-lru"}},
		{name: "replay volatile-lru refused", srv: r7, settings: "maxmemory-policy volatile-lru", cmd: "replay", code: 2,
			want: []string{"maxmemory-policy is volatile-lru", "--redis-allow-eviction"}},
		{name: "no persistence refused", srv: r7, settings: "appendonly no save ''", cmd: "run", code: 2,
			want: []string{`appendonly no and save ""`, "appendonly yes", "--redis-allow-no-persistence"}},
		{name: "no persistence allowed", srv: r7, settings: "appendonly no save ''", cmd: "run",
			flags: []string{"--redis-allow-no-persistence"}, want: []string{"appendonly no, no save points"}},
		{name: "replay no persistence refused", srv: r7, settings: "appendonly no save ''", cmd: "replay", code: 2,
			want: []string{`appendonly no and save ""`, "--redis-allow-no-persistence"}},
		{name: "everysec without WAITAOF warns", srv: r7, settings: "", cmd: "run",
			want: []string{"appendfsync everysec", "no WAITAOF", "last second"}},
		{name: "everysec with WAITAOF waits", srv: vk, settings: "", cmd: "run",
			want: []string{`"wait":"WAITAOF"`, `"local_fsync":true`}, not: []string{"no WAITAOF"}},
		{name: "CONFIG refused by ACL", srv: r7, settings: "", cmd: "run", redis: "redis://noconfig:pw@",
			want: []string{"CONFIG GET", "refused", "not checked"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.srv.Config(ctx, "maxmemory-policy", "noeviction", "appendonly", "yes", "appendfsync", "everysec", "save", "")
			if tc.settings != "" {
				f := strings.Fields(tc.settings)
				for i := range f {
					if f[i] == "''" {
						f[i] = ""
					}
				}
				tc.srv.Config(ctx, f...)
			}
			redisArg := tc.srv.Addr
			if tc.redis != "" {
				redisArg = tc.redis + tc.srv.Addr
			}
			args := []string{tc.cmd, "--brokers", strings.Join(brokers, ","), "--topic", topic, "--redis", redisArg,
				"--on-poison", "stop", "--log-format", "json"}
			if tc.cmd == "run" {
				args = append(args, "--group", integration.Group(t), "--report-interval", "0")
			} else {
				args = append(args, "--id", integration.Group(t), "--from", "0", "--dry-run")
			}
			p := itest.Start(t, tc.name, bin, append(args, tc.flags...)...)
			if tc.code == 0 {
				p.WaitLine(ctx, "pipeline starting", func(map[string]any) bool { return true })
				p.Signal(syscall.SIGTERM)
			}
			if code := p.Wait(ctx); code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, p.Output())
			}
			out := p.Output()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}
