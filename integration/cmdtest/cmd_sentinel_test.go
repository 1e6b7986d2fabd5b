package cmdtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdRedisSentinel: run reaches the ledger through Redis Sentinel (a
// --redis URL with master_name) as an ACL user whose password comes from
// --redis-password-file, and applies every record once on the master the
// sentinel names. Real servers: a private redis-server master and a
// redis-server in sentinel mode watching it.
func TestCmdRedisSentinel(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	bin := itest.BuildShardpipe(t)
	master := itest.StartServer(t, itest.RedisBin(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const pass = "sentinel-ledger-Secr3t"
	if err := master.C.Do(ctx, "ACL", "SETUSER", "ledger", "on", ">"+pass, "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	saddr := integration.ClosedAddr(t)
	sport := saddr[strings.LastIndexByte(saddr, ':')+1:]
	mhost, mport, _ := strings.Cut(master.Addr, ":")
	conf := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "port %s\nbind 127.0.0.1\ndir %s\nsentinel monitor m %s %s 1\n", sport, dir, mhost, mport), 0o600); err != nil {
		t.Fatal(err)
	}
	sent := exec.Command(itest.RedisBin(t), conf, "--sentinel")
	if err := sent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sent.Process.Kill(); _ = sent.Wait() })
	sc := redis.NewSentinelClient(&redis.Options{Addr: saddr})
	defer sc.Close()
	for {
		if a, err := sc.GetMasterAddrByName(ctx, "m").Result(); err == nil && len(a) == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the sentinel does not name the master: %v", ctx.Err())
		}
		time.Sleep(50 * time.Millisecond) // poll interval: no event to wait on
	}
	topic, group := integration.CreateTopic(t, brokers, 1), integration.Group(t)
	cl := integration.NewKafkaClient(t, brokers)
	const n = 20
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("{}")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	passFile := filepath.Join(dir, "pass")
	if err := os.WriteFile(passFile, []byte(pass), 0o600); err != nil {
		t.Fatal(err)
	}
	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
		"--redis", "redis://"+saddr+"?master_name=m", "--redis-user", "ledger", "--redis-password-file", passFile,
		"--ledger-prefix", "sentinel:", "--on-poison", "stop", "--report-interval", "100ms", "--log-format", "json")
	run.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "applied") == n })
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, run.Output())
	}
	if strings.Contains(run.Output(), pass) {
		t.Fatalf("the password is in the output:\n%s", run.Output())
	}
	if got := itest.CountRedisKeys(ctx, t, master.C, "sentinel:*"); got != n {
		t.Fatalf("the master holds %d ledger keys, want %d", got, n)
	}
}
