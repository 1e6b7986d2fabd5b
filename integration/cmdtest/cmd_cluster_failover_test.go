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

// TestCmdClusterFailover: a master of the ledger's Redis Cluster is
// SIGKILLed after run applied orders it had not yet replicated, and its
// replica takes over without them. The replica is made to miss them for
// sure: it is SIGSTOPped and a 48 MB value is written to the master first,
// which fills the replication link's socket buffers, so the ledger writes
// after it are still in the master's memory when it dies.
//
//   - wait (--redis-replicas 1): no commit passes those orders while the
//     replica lacks them; after the failover run sees that the primary
//     changed, applies the records since its last commit again (the ledger
//     of the new master suppresses what it kept), and commits once the old
//     master is back as the new one's replica. Nothing is lost: every order
//     has its ledger key and the totals are exact.
//   - nowait (--redis-replicas 0): run committed those orders as soon as the
//     master acknowledged them; the failover loses their ledger keys and
//     their totals, and nothing reads them again. The test shows the loss.
func TestCmdClusterFailover(t *testing.T) {
	itest.HeavyCluster(t)
	t.Parallel()
	brokers := integration.Kafka(t)
	bin := itest.BuildShardpipe(t)
	for _, wait := range []bool{true, false} {
		name := map[bool]string{true: "wait", false: "nowait"}[wait]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clusterFailover(t, brokers, bin, wait)
		})
	}
}

func clusterFailover(t *testing.T, brokers []string, bin string, wait bool) {
	const perPhase = 200
	rc := itest.StartRedisCluster(t)
	c := itest.ClusterClient(t, rc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 2)
	group := integration.Group(t)
	tag := "{" + group[len(group)-8:] + "}"
	prefix, hash := tag+":ledger:", tag+":totals"
	shard, err := rc.ShardOf(ctx, tag)
	if err != nil || len(shard.Replicas) != 1 {
		t.Fatalf("shard of %s: %+v (%v), want a master with one replica", tag, shard, err)
	}
	master, replica := shard.Master, shard.Replicas[0]
	replicas := map[bool]string{true: "1", false: "0"}[wait]
	b := strings.Join(brokers, ",")
	run := itest.Start(t, "run", bin, "run", "--brokers", b, "--topic", topic, "--group", group,
		"--redis", strings.Join(rc.Addrs, ","), "--ledger-prefix", prefix, "--effect", "totals", "--totals-hash", hash,
		"--dlq-prefix", integration.KeyPrefix(t), "--redis-replicas", replicas,
		"--commit-every", "20", "--commit-interval", "100ms", "--on-poison", "stop", "--report-interval", "0",
		"--session-timeout", "6s", "--log-format", "json")
	produce := func(seed int) map[int32]int64 {
		p := itest.Start(t, "produce", bin, "produce", "--brokers", b, "--topic", topic, "--count", fmt.Sprint(perPhase),
			"--seed", fmt.Sprint(seed))
		if code := p.Wait(ctx); code != 0 {
			t.Fatalf("produce: exit %d\n%s", code, p.Output())
		}
		return itest.EndOffsets(ctx, t, brokers, topic)
	}
	awaitCommitted := func(ends map[int32]int64, what string) {
		for {
			got := itest.GroupCommitted(ctx, t, brokers, group, topic)
			if len(got) == len(ends) && got[0] == ends[0] && got[1] == ends[1] {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: committed %v, want %v\n%s", what, got, ends, run.Output())
			}
			time.Sleep(50 * time.Millisecond) // poll interval: the broker's offsets
		}
	}

	// Phase 1: orders applied, replicated and committed.
	awaitCommitted(produce(1), "phase 1")

	// Phase 2: the replica misses what the master acknowledges.
	if err := rc.Signal(replica, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, tag+":filler", strings.Repeat("x", 48<<20), 0).Err(); err != nil {
		t.Fatalf("filler: %v", err)
	}
	ends := produce(2)
	if wait {
		held := map[string]bool{}
		for len(held) < len(ends) {
			m := run.WaitLine(ctx, "commit failed; retrying", func(m map[string]any) bool {
				err, _ := m["err"].(string)
				return strings.Contains(err, "0 of 1 replicas")
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
	} else {
		awaitCommitted(ends, "phase 2 without a wait")
	}
	before, _ := itest.ClusterKeys(ctx, t, rc, c, prefix)
	if len(before) != 2*perPhase {
		t.Fatalf("the master holds %d ledger keys before the failover, want %d", len(before), 2*perPhase)
	}

	// The failover: the master dies, its stale replica takes over; the old
	// master comes back as the new one's replica.
	if err := rc.Kill(ctx, master); err != nil {
		t.Fatal(err)
	}
	if err := rc.Signal(replica, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := rc.AwaitMaster(ctx, replica, 0, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	awaitCommitted(ends, "after the failover")
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Fatalf("run exit %d, want 0\n%s", code, run.Output())
	}

	exp := itest.ReadTopic(ctx, t, brokers, topic, 2*perPhase)
	keys, _ := itest.ClusterKeys(ctx, t, rc, c, prefix)
	lost := 0
	for p, ks := range exp.KeyAt {
		for o, k := range ks {
			if !keys[k] {
				lost++
				if lost <= 3 {
					t.Logf("order %s (%s/%d@%d, committed) has no ledger key after the failover", k, topic, p, o)
				}
			}
		}
	}
	totals, err := c.HGetAll(ctx, hash).Result()
	if err != nil {
		t.Fatal(err)
	}
	short := totalsShort(exp.Totals, totals)
	t.Logf("--redis-replicas %s: %d of %d orders lost across the failover; totals short by %d cents over %d customers",
		replicas, lost, 2*perPhase, short.cents, short.customers)
	if wait {
		if !strings.Contains(run.Output(), "applying those records again before committing") {
			t.Fatalf("run did not say it applied the records since its last commit again after the failover:\n%s", run.Output())
		}
		if lost > 0 || short.customers > 0 {
			t.Fatalf("with the wait the failover lost %d orders and %d cents: want none", lost, short.cents)
		}
		itest.CheckTotals(ctx, t, c, hash, exp)
		return
	}
	if lost == 0 || short.cents == 0 {
		t.Fatalf("without the wait the failover lost %d orders (%d cents): the replica was made to miss the last %d, want them lost",
			lost, short.cents, perPhase)
	}
}

type shortfall struct {
	cents     int64
	customers int
}

// totalsShort compares the totals hash with the expected sums.
func totalsShort(want map[string]int64, got map[string]string) shortfall {
	var s shortfall
	for cust, sum := range want {
		var n int64
		_, _ = fmt.Sscan(got[cust], &n)
		if n != sum {
			s.cents += sum - n
			s.customers++
		}
	}
	return s
}
