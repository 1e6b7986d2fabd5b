package cmdtest_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdCommitWaitsForReplica: with --redis-replicas 1, run commits a
// partition's offset only once the replica holds the ledger writes before
// it: on Valkey 9 fsynced there and locally (WAITAOF 1 1), on Debian's Redis
// 7.0, which has no WAITAOF, received (WAIT 1); both after a fence write on
// the same connection. The replica is SIGSTOPped before run starts: every
// effect lands on the primary, every commit is held back (run logs each
// one, with the offset it would have committed), and the group has no
// committed offset. SIGCONT: the replica catches up and the commits reach
// the end. Then a replay of the topic, replica stopped again: its checkpoint
// commits are held back the same way, and it ends (exit 0) only after SIGCONT.
func TestCmdCommitWaitsForReplica(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	bin := itest.BuildShardpipe(t)
	for _, tc := range []struct {
		name, wait string
		bin        func(testing.TB) string
	}{
		{"valkey", "WAITAOF", itest.ValkeyBin},
		{"redis7", "WAIT", itest.RedisBin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			commitWaitsForReplica(t, brokers, bin, tc.bin(t), tc.wait)
		})
	}
}

func commitWaitsForReplica(t *testing.T, brokers []string, bin, server, wait string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	primary := itest.StartServer(t, server)
	replica := itest.StartReplica(t, server, primary)
	topic := integration.CreateTopic(t, brokers, 2)
	ends := itest.ProduceKeys(ctx, t, brokers, topic, 40)
	group := integration.Group(t)

	replica.Signal(syscall.SIGSTOP)
	stopped := true
	defer func() {
		if stopped {
			replica.Signal(syscall.SIGCONT)
		}
	}()
	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
		"--redis", primary.Addr, "--redis-replicas", "1", "--commit-every", "10", "--commit-interval", "100ms",
		"--on-poison", "stop", "--report-interval", "0", "--session-timeout", "6s", "--log-format", "json")
	run.WaitLine(ctx, "redis durability", func(m map[string]any) bool {
		return m["wait"] == wait && itest.Num(m, "replicas") == 1 && m["local_fsync"] == (wait == "WAITAOF")
	})
	// Each partition's commit of its end offset is tried and held back.
	held := make(map[string]bool)
	for len(held) < len(ends) {
		m := run.WaitLine(ctx, "commit failed; retrying", func(m map[string]any) bool {
			err, _ := m["err"].(string)
			return strings.Contains(err, "not yet durable") && strings.Contains(err, "0 of 1 replicas")
		})
		p, _ := m["partition"].(string)
		var part int32
		if _, err := fmt.Sscanf(p[strings.LastIndexByte(p, '/')+1:], "%d", &part); err != nil {
			t.Fatalf("partition %q: %v", p, err)
		}
		if itest.Num(m, "offset") == ends[part] {
			held[p] = true
		}
	}
	if n, err := primary.C.DBSize(ctx).Result(); err != nil || n < 40 {
		t.Fatalf("primary holds %d keys (%v), want the 40 ledger keys (and the fence)", n, err)
	}
	if got := itest.GroupCommitted(ctx, t, brokers, group, topic); len(got) > 0 {
		t.Fatalf("committed %v while the replica was stopped; want nothing committed", got)
	}

	replica.Signal(syscall.SIGCONT)
	stopped = false
	for {
		got := itest.GroupCommitted(ctx, t, brokers, group, topic)
		if len(got) == len(ends) && got[0] == ends[0] && got[1] == ends[1] {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("committed %v after the replica continued, want %v\n%s", got, ends, run.Output())
		}
		time.Sleep(50 * time.Millisecond) // poll interval: the broker's offsets
	}
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("run exit %d, want 0\n%s", code, run.Output())
	}

	// replay's checkpoint commits wait alike: with the replica stopped it
	// cannot finish; once the replica continues it does.
	replica.Signal(syscall.SIGSTOP)
	stopped = true
	rep := itest.Start(t, "replay", bin, "replay", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--id", group,
		"--from", "0", "--redis", primary.Addr, "--redis-replicas", "1", "--commit-every", "10", "--on-poison", "stop",
		"--log-format", "json")
	rep.WaitLine(ctx, "commit failed; retrying", func(m map[string]any) bool {
		err, _ := m["err"].(string)
		return strings.Contains(err, "not yet durable")
	})
	select {
	case <-rep.Done:
		t.Fatalf("replay ended (exit %d) while the replica was stopped\n%s", rep.Code, rep.Output())
	default:
	}
	replica.Signal(syscall.SIGCONT)
	stopped = false
	if code := rep.Wait(ctx); code != 0 {
		t.Fatalf("replay exit %d, want 0\n%s", code, rep.Output())
	}
}
