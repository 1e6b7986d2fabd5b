package integration_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
	"github.com/shardpipe/shardpipe/internal/harness/clusters"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// startKafkaCluster starts a Kafka of three KRaft nodes of the test's own
// (scripts/services.sh) and stops it at cleanup.
func startKafkaCluster(t *testing.T) *clusters.Kafka {
	t.Helper()
	itest.NeedBins(t, "java")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	k, err := clusters.StartKafka(ctx, itest.RepoRoot(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := k.Stop(ctx); err != nil {
			t.Errorf("stop the kafka cluster: %v", err)
		}
	})
	return k
}

// TestKafkaClusterLeaderKilled: on a Kafka of three brokers (replication
// factor 3, min.insync.replicas=2), two `shardpipe run` processes consume
// orders being produced (4,000 with 10% re-sends, 400 a second, acks=all)
// with --effect totals, while the broker leading the most partitions of the
// topic is SIGKILLed mid-run and started again 10s later (the group's
// coordinator, when it leads at least two partitions). The other two
// take over its partitions and the group:
// the consumers' commits of those partitions move on while it is down, and
// at the end every order applied exactly once (each has its ledger key, the
// totals are exact), every offset committed to the end, and no offset was
// committed below the one before (the group's commit log, read back from
// __consumer_offsets; a watcher also polls the offsets every 25ms and must
// read them while the broker is down). The
// classic protocol always; with SHARDPIPE_CLUSTER_TESTS=1 also the consumer
// protocol (KIP-848), on the same brokers.
func TestKafkaClusterLeaderKilled(t *testing.T) {
	t.Parallel()
	integration.Kafka(t) // the integration tests are on
	addr := integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	k := startKafkaCluster(t)
	protocols := []string{"classic"}
	if os.Getenv(itest.EnvClusterTests) == "1" {
		protocols = append(protocols, "consumer")
	}
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) { leaderKilled(t, bin, k, addr, proto) })
	}
}

func leaderKilled(t *testing.T, bin string, k *clusters.Kafka, addr, proto string) {
	const count = 4000
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	brokers := k.Brokers
	adm := integration.NewAdmin(t, brokers)
	topic, group := integration.Topic(t), integration.Group(t)
	createRF3(ctx, t, adm, topic, 6)
	createRF3(ctx, t, adm, topic+".dlq", 6)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	w, err := chaoscheck.NewWatcher(brokers, group, topic)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wstop := context.WithCancel(ctx)
	wdone := make(chan struct{})
	go func() { defer close(wdone); w.Run(wctx, 25*time.Millisecond) }()
	defer func() { wstop(); <-wdone }()

	b := strings.Join(brokers, ",")
	args := []string{"run", "--brokers", b, "--topic", topic, "--group", group, "--group-protocol", proto,
		"--redis", addr, "--ledger-prefix", prefix + "ledger:", "--dlq-prefix", prefix + "sp:",
		"--effect", "totals", "--totals-hash", prefix + "totals",
		"--commit-every", "50", "--commit-interval", "200ms", "--report-interval", "200ms",
		"--session-timeout", "6s", "--log-format", "json"}
	runs := []*itest.Proc{itest.Start(t, "run 1", bin, args...), itest.Start(t, "run 2", bin, args...)}
	produce := itest.Start(t, "produce", bin, "produce", "--brokers", b, "--topic", topic, "--count", fmt.Sprint(count),
		"--duplicates", "0.1", "--rate", "400", "--seed", "41")
	runs[0].WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "claimed") >= 300 })

	node, parts, coordinator, err := clusters.Victim(ctx, adm, group, topic)
	if err != nil {
		t.Fatal(err)
	}
	before := itest.GroupCommitted(ctx, t, brokers, group, topic)
	t.Logf("SIGKILL broker %d, the leader of partitions %v (the group's coordinator: %t); committed %v", node, parts, coordinator, before)
	if err := k.Kill(ctx, int(node)); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	restarted := false
	t.Cleanup(func() { // a failed run still leaves the cluster whole for the next protocol
		if !restarted {
			sctx, scancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer scancel()
			if err := k.Start(sctx); err != nil {
				t.Errorf("restarting broker %d after the failure: %v", node, err)
			}
		}
	})
	moved, err := k.AwaitLeadersOff(ctx, topic, node, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("new leaders after %v: %v", time.Since(killed).Round(time.Millisecond), moved)
	// Commits of the killed broker's partitions move on while it is down.
	alive := []string{}
	for i, br := range brokers {
		if int32(i+1) != node {
			alive = append(alive, br)
		}
	}
	for {
		got := itest.GroupCommitted(ctx, t, alive, group, topic)
		n := 0
		for _, p := range parts {
			if got[p] > before[p] {
				n++
			}
		}
		if n == len(parts) {
			t.Logf("with broker %d down, commits of its partitions moved on: %v", node, got)
			break
		}
		if ctx.Err() != nil || time.Since(killed) > 2*time.Minute {
			t.Fatalf("commits of partitions %v stuck at %v (before the kill %v) with broker %d down\n%s", parts, got, before, node, runs[0].Output())
		}
		time.Sleep(100 * time.Millisecond) // poll interval: the broker's offsets
	}
	// The broker stays down 10s in all (a fault's length, not a wait for an
	// event), and at least until the watcher has read the commits twice
	// since the others took over (an event: on a loaded machine taking over
	// can outlast the 10s), so they do not go unchecked while it is down.
	_, pollsMoved := w.Decreases()
	movedAt := time.Now()
	if err := sleepCtx(ctx, 10*time.Second-time.Since(killed)); err != nil {
		t.Fatal(err)
	}
	for {
		_, p := w.Decreases()
		if p.Seen >= pollsMoved.Seen+2 {
			break
		}
		if ctx.Err() != nil || time.Since(movedAt) > time.Minute {
			t.Fatalf("the watcher read no committed offsets in the %v broker %d was still down after the others took over (%d polls, %d failed): the commits then went unchecked",
				time.Since(movedAt).Round(time.Millisecond), node, p.Made-pollsMoved.Made, p.Failed-pollsMoved.Failed)
		}
		time.Sleep(25 * time.Millisecond) // poll interval of a condition (the watcher's count)
	}
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	t.Logf("broker %d back after %v", node, time.Since(killed).Round(time.Millisecond))

	if code := produce.Wait(ctx); code != 0 {
		t.Fatalf("produce: exit %d\n%s", code, produce.Output())
	}
	records := count + count/10
	ends := itest.EndOffsets(ctx, t, brokers, topic)
	for {
		got := itest.GroupCommitted(ctx, t, brokers, group, topic)
		done := len(got) == len(ends)
		for p, e := range ends {
			done = done && got[p] == e
		}
		if done {
			break
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
	wstop()
	<-wdone
	// Every commit the brokers stored, in order: none below the one before.
	history, err := chaoscheck.CommitHistory(ctx, brokers, group, topic)
	if err != nil {
		t.Fatal(err)
	}
	commits := 0
	for p, offs := range history {
		commits += len(offs)
		for i := 1; i < len(offs); i++ {
			if offs[i] < offs[i-1] {
				t.Fatalf("partition %d: offset %d committed after %d (commit log %v)", p, offs[i], offs[i-1], offs)
			}
		}
	}
	// What readers saw: after a coordinator failover the new coordinator
	// may serve an older offset until its high watermark catches up (a
	// stale read, which the log above does not hold).
	decreases, polls := w.Decreases()
	if polls.Seen == 0 || commits == 0 {
		t.Fatalf("the watcher read %d committed offsets and the commit log holds %d commits: nothing was checked", polls.Seen, commits)
	}
	t.Logf("%d commits in the group's log, never lower than the one before; the watcher saw %d stale reads %v", commits, len(decreases), decreases)
	exp := itest.ReadTopic(ctx, t, brokers, topic, records)
	if exp.Unique != count {
		t.Fatalf("topic holds %d orders, want %d (the producer is idempotent)", exp.Unique, count)
	}
	keys := itest.RedisKeySet(ctx, t, rdb, prefix+"ledger:", "*")
	for _, ks := range exp.KeyAt {
		for _, key := range ks {
			if !keys[key] {
				t.Fatalf("order %s has no ledger key: lost", key)
			}
		}
	}
	if len(keys) != count {
		t.Fatalf("ledger holds %d keys, want %d", len(keys), count)
	}
	itest.CheckTotals(ctx, t, rdb, prefix+"totals", exp)
	t.Logf("%d records, %d orders, each applied once; totals exact; %d polls of the commits (%d failed)",
		exp.Records, exp.Unique, polls.Made, polls.Failed)
}

// createRF3 creates topic with partitions partitions on all three brokers
// and waits until every partition has a leader.
func createRF3(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, partitions int32) {
	t.Helper()
	resp, err := adm.CreateTopic(ctx, partitions, 3, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s (%d partitions, RF 3): %v", topic, partitions, err)
	}
	for {
		l, err := clusters.Leaders(ctx, adm, topic)
		ready := err == nil && len(l) == int(partitions)
		for _, n := range l {
			ready = ready && n >= 0
		}
		if ready {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: no leader for every partition: %v", topic, err)
		}
		time.Sleep(50 * time.Millisecond) // poll interval: the metadata
	}
}

// sleepCtx waits d (nothing when d <= 0) or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
