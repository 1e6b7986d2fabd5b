package cmdtest_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/clusters"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdClusterDuringRun: faults of the ledger's Redis Cluster while two
// `shardpipe run` processes consume orders being produced (5,000 with 10%
// re-sends at 500 a second), then a check that every order landed exactly
// once and every offset is committed to the end:
//   - master killed: --effect totals with a {hash tag}, --redis-replicas 1;
//     the master of the tag's slot is SIGKILLed mid-run, its replica takes
//     over, the old master comes back as its replica. The totals are exact.
//   - slot migration: --effect totals with a {hash tag} whose slot is among
//     the first 200 of its master's; `redis-cli --cluster reshard` moves
//     those 200 slots, five keys at a time, to another master mid-run, so
//     the ledger script meets ASK (its ledger key not on the old master),
//     TRYAGAIN (its two keys on two masters while the slot moves) and MOVED
//     (the slot moved) mid-batch; the masters' error counters show them.
//     The totals are exact.
func TestCmdClusterDuringRun(t *testing.T) {
	itest.HeavyCluster(t)
	t.Parallel()
	brokers := integration.Kafka(t)
	bin := itest.BuildShardpipe(t)
	t.Run("master killed", func(t *testing.T) { t.Parallel(); clusterDuringRun(t, brokers, bin, true) })
	t.Run("slot migration", func(t *testing.T) { t.Parallel(); clusterDuringRun(t, brokers, bin, false) })
}

func clusterDuringRun(t *testing.T, brokers []string, bin string, kill bool) {
	const count = 5000
	rc := itest.StartRedisCluster(t)
	c := itest.ClusterClient(t, rc)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 6)
	integration.CreateDeadLetterTopic(t, brokers, topic, 6)
	group := integration.Group(t)
	base := integration.KeyPrefix(t)
	tag := "{" + base[len(base)-9:len(base)-1] + "}"
	shards, err := rc.Shards(ctx)
	if err != nil || len(shards) != 3 {
		t.Fatalf("shards %+v (%v)", shards, err)
	}
	from, to := shards[0], shards[1]
	if !kill { // a tag among the first 200 slots of shards[0]
		for i := 0; clusters.Slot(tag) >= from.Slots[0][0]+200 || clusters.Slot(tag) < from.Slots[0][0]; i++ {
			tag = fmt.Sprintf("{%s-%d}", base[len(base)-9:len(base)-1], i)
		}
	}
	b := strings.Join(brokers, ",")
	common := func(group string) []string {
		return []string{"run", "--brokers", b, "--topic", topic, "--group", group, "--redis", strings.Join(rc.Addrs, ","),
			"--commit-every", "50", "--commit-interval", "200ms", "--max-batch", "100", "--report-interval", "200ms",
			"--session-timeout", "6s", "--log-format", "json", "--dlq-prefix", base}
	}
	prefix, hash := tag+":ledger:", tag+":totals"
	args := append(common(group), "--ledger-prefix", prefix, "--effect", "totals", "--totals-hash", hash)
	groups := []string{group, group}
	runs := []*itest.Proc{itest.Start(t, "run 1", bin, args...)}
	if kill {
		args = append(args, "--redis-replicas", "1")
		runs = []*itest.Proc{itest.Start(t, "run 1", bin, args...), itest.Start(t, "run 2", bin, args...)}
	} else {
		// The second process: the ledger alone, in a group of its own, its
		// keys under the same tag: each claim is a single-key write, which a
		// slot being moved answers with ASK once the key is not on the old
		// master (a new key never is).
		groups[1] = group + "-ledger"
		runs = append(runs, itest.Start(t, "run 2 (ledger)", bin, append(common(groups[1]), "--ledger-prefix", tag+":plain:")...))
	}
	produce := itest.Start(t, "produce", bin, "produce", "--brokers", b, "--topic", topic, "--count", fmt.Sprint(count),
		"--duplicates", "0.1", "--rate", "300", "--seed", "31")
	runs[0].WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "claimed") >= 300 })

	if kill {
		shard, err := rc.ShardOf(ctx, tag)
		if err != nil || len(shard.Replicas) != 1 {
			t.Fatalf("shard of %s: %+v (%v)", tag, shard, err)
		}
		t.Logf("SIGKILL master node %d (slot of %s); replica node %d takes over", shard.Master, tag, shard.Replicas[0])
		if err := rc.Kill(ctx, shard.Master); err != nil {
			t.Fatal(err)
		}
		if err := rc.AwaitMaster(ctx, shard.Replicas[0], 0, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := rc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("node %d is the master; node %d back as its replica", shard.Replicas[0], shard.Master)
	} else {
		e0, err := rc.ErrorStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		if err := rc.Reshard(ctx, from, to, 200, 5); err != nil {
			t.Fatal(err)
		}
		e1, err := rc.ErrorStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if now, err := rc.ShardOf(ctx, tag); err != nil || now.Master != to.Master {
			t.Fatalf("after the migration %s's slot is on %+v (%v), want node %d", tag, now, err, to.Master)
		}
		moved, ask, again := e1["MOVED"]-e0["MOVED"], e1["ASK"]-e0["ASK"], e1["TRYAGAIN"]-e0["TRYAGAIN"]
		t.Logf("moved 200 slots (with %s's) from node %d to node %d in %v while run wrote: the masters answered MOVED %d, ASK %d, TRYAGAIN %d times",
			tag, from.Master, to.Master, time.Since(began).Round(time.Millisecond), moved, ask, again)
		if moved == 0 || ask == 0 {
			t.Fatalf("MOVED %d, ASK %d during the migration: want both met mid-run", moved, ask)
		}
		select {
		case <-produce.Done:
			t.Fatalf("production ended before the migration did: the writes did not meet it")
		default:
		}
	}
	if code := produce.Wait(ctx); code != 0 {
		t.Fatalf("produce: exit %d\n%s", code, produce.Output())
	}
	records := count + count/10
	ends := itest.EndOffsets(ctx, t, brokers, topic)
	for g := 0; g < len(groups); {
		got := itest.GroupCommitted(ctx, t, brokers, groups[g], topic)
		done := len(got) == len(ends)
		for p, e := range ends {
			done = done && got[p] == e
		}
		if done {
			g++
			continue
		}
		if ctx.Err() != nil {
			t.Fatalf("committed %v, want %v\n%s\n%s", got, ends, runs[0].Output(), runs[1].Output())
		}
		time.Sleep(100 * time.Millisecond) // poll interval: the broker's offsets
	}
	for _, r := range runs {
		select {
		case <-r.Done:
			t.Fatalf("%s exited on its own (code %d):\n%s", r.Name, r.Code, r.Output())
		default:
		}
		r.Signal(syscall.SIGTERM)
		if code := r.Wait(ctx); code != 0 {
			t.Fatalf("%s after SIGTERM: exit %d\n%s", r.Name, code, r.Output())
		}
	}
	exp := itest.ReadTopic(ctx, t, brokers, topic, records)
	keys, per := itest.ClusterKeys(ctx, t, rc, c, prefix)
	lost := 0
	for _, ks := range exp.KeyAt {
		for _, k := range ks {
			if !keys[k] {
				lost++
			}
		}
	}
	t.Logf("%d records, %d orders; ledger %d keys (per master %v), %d orders without one", exp.Records, exp.Unique, len(keys), per, lost)
	if lost > 0 || len(keys) != exp.Unique {
		t.Fatalf("ledger holds %d keys for %d orders, %d orders missing", len(keys), exp.Unique, lost)
	}
	itest.CheckTotals(ctx, t, c, hash, exp)
	if !kill {
		plain, _ := itest.ClusterKeys(ctx, t, rc, c, tag+":plain:")
		if len(plain) != exp.Unique {
			t.Fatalf("the ledger-only group holds %d keys, want %d", len(plain), exp.Unique)
		}
	}
}
