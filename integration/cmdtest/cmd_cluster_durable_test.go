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

// TestCmdClusterCommitWaitsForReplicas: on Redis Cluster, --redis-replicas 1
// makes run commit an offset only once a replica of every primary holds the
// ledger writes before it (Redis 7.0: WAIT, after a fence write in one of
// that primary's own slots, on the same connection). One primary's replica
// is SIGSTOPped before run starts: every effect lands (the ledger keys
// spread over the three primaries), every partition's commit of its end is
// held back as not durable ("0 of 1 replicas"), and the group has no
// committed offset. SIGCONT: the commits reach the end.
func TestCmdClusterCommitWaitsForReplicas(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	bin := itest.BuildShardpipe(t)
	rc := itest.StartRedisCluster(t) // of its own: a stopped replica stalls clients that ask it for the slots
	c := itest.ClusterClient(t, rc)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 2)
	ends := itest.ProduceKeys(ctx, t, brokers, topic, 40)
	group := integration.Group(t)
	base := integration.KeyPrefix(t)
	prefix := base + "ledger:"

	shards, err := rc.Shards(ctx)
	if err != nil || len(shards) != 3 || len(shards[0].Replicas) != 1 {
		t.Fatalf("shards %+v (%v): want three masters with a replica each", shards, err)
	}
	replica := shards[0].Replicas[0]
	if err := rc.Signal(replica, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = rc.Signal(replica, syscall.SIGCONT)
		}
	}()
	// Seed run with the primaries only: go-redis reads the slots from a
	// seed picked at random, and asking the stopped replica first would
	// hang past the start-up deadline (each try waits out the read timeout,
	// and go-redis retries it), which is not what this test is about.
	var seeds []string
	for _, s := range shards {
		seeds = append(seeds, rc.Addrs[s.Master-1])
	}
	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
		"--redis", strings.Join(seeds, ","), "--ledger-prefix", prefix, "--dlq-prefix", base+"sp:",
		"--redis-replicas", "1", "--commit-every", "10", "--commit-interval", "100ms",
		"--on-poison", "stop", "--report-interval", "0", "--session-timeout", "6s", "--log-format", "json")
	run.WaitLine(ctx, "redis durability", func(m map[string]any) bool {
		return m["wait"] == "WAIT" && itest.Num(m, "replicas") == 1
	})
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
	keys, per := itest.ClusterKeys(ctx, t, rc, c, prefix)
	if len(keys) != 40 || len(per) != 3 {
		t.Fatalf("ledger: %d keys over masters %v, want the 40 spread over all three", len(keys), per)
	}
	if got := itest.GroupCommitted(ctx, t, brokers, group, topic); len(got) > 0 {
		t.Fatalf("committed %v while a primary's replica was stopped; want nothing committed", got)
	}

	if err := rc.Signal(replica, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
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
}
