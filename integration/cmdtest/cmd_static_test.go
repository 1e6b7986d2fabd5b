package cmdtest_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdStaticMembershipRestart: two `shardpipe run` processes with
// --instance-id share a topic's partitions; one is stopped with SIGTERM
// (exit 0) and started again with the same ID within the session timeout.
// It gets back exactly the partitions it held, and the other process sees
// no rebalance: no partition assigned, revoked or lost, the same partitions
// held throughout. Classic protocol only: in the consumer protocol (KIP-848)
// the broker of scripts/services.sh answers the restarted member
// UNRELEASED_INSTANCE_ID for several seconds after franz-go's temporary
// leave (member epoch -2), and meanwhile gives its partitions to the other
// member (see --instance-id's help).
func TestCmdStaticMembershipRestart(t *testing.T) {
	brokers := integration.Kafka(t)
	bin := itest.BuildShardpipe(t)
	for _, protocol := range []string{"classic"} {
		t.Run(protocol, func(t *testing.T) {
			staticRestart(t, bin, brokers, protocol)
		})
	}
}

func staticRestart(t *testing.T, bin string, brokers []string, protocol string) {
	const partitions = 4
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	addr := integration.Redis(t)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	topic := integration.CreateTopic(t, brokers, partitions)
	integration.CreateDeadLetterTopic(t, brokers, topic, partitions)
	group := integration.Group(t)
	args := func(id string) []string {
		return []string{"run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
			"--redis", addr, "--ledger-prefix", prefix + "l:", "--dlq-prefix", prefix + "own:",
			"--group-protocol", protocol, "--session-timeout", "60s", "--instance-id", id,
			"--metrics-addr", "127.0.0.1:0", "--log-format", "json"}
	}
	idA, idB := group+"-a", group+"-b"
	a := itest.Start(t, "run a", bin, args(idA)...)
	b := itest.Start(t, "run b", bin, args(idB)...)
	addrA, addrB := metricsAddr(ctx, a), metricsAddr(ctx, b)

	// Both hold their share of the partitions.
	var heldA, heldB []int32
	for {
		heldA, heldB = heldPartitions(ctx, t, addrA), heldPartitions(ctx, t, addrB)
		all := append(slices.Clone(heldA), heldB...)
		slices.Sort(all)
		if len(heldA) > 0 && len(heldB) > 0 && slices.Equal(slices.Compact(all), []int32{0, 1, 2, 3}) && len(all) == partitions {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the two processes never shared the partitions: a %v, b %v", heldA, heldB)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The group has settled: the broker's state is Stable (in the consumer
	// protocol, every member reconciled its target assignment).
	awaitStable(ctx, t, brokers, group, protocol)
	rebalancesB := strings.Count(b.Output(), "partitions ")
	t.Logf("a holds %v, b holds %v", heldA, heldB)

	a.Signal(syscall.SIGTERM)
	if code := a.Wait(ctx); code != 0 {
		t.Fatalf("run a: exit %d after SIGTERM\n%s", code, a.Output())
	}
	// A static member that stopped is still a member: no LeaveGroup.
	if members := groupInstances(ctx, t, brokers, group); !slices.Equal(members, []string{idA, idB}) {
		t.Fatalf("after a stopped the group's members have instance IDs %q, want both %q and %q", members, idA, idB)
	}
	a2 := itest.Start(t, "run a again", bin, args(idA)...)
	addrA2 := metricsAddr(ctx, a2)
	back, cancelBack := context.WithTimeout(ctx, 30*time.Second) // well within the session timeout
	defer cancelBack()
	for {
		got := heldPartitions(ctx, t, addrA2)
		if slices.Equal(got, heldA) {
			break
		}
		if len(got) > len(heldA) || back.Err() != nil {
			t.Fatalf("restarted a holds %v, want %v\na:\n%s\na again:\n%s\nb:\n%s", got, heldA, a.Output(), a2.Output(), b.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := heldPartitions(ctx, t, addrB); !slices.Equal(got, heldB) {
		t.Errorf("b holds %v after a's restart, want %v", got, heldB)
	}
	if n := strings.Count(b.Output(), "partitions "); n != rebalancesB {
		t.Errorf("b logged partition changes during a's restart:\n%s\na:\n%s\na again:\n%s", b.Output(), a.Output(), a2.Output())
	}
	for _, p := range []*itest.Proc{a2, b} {
		p.Signal(syscall.SIGTERM)
		if code := p.Wait(ctx); code != 0 {
			t.Errorf("%s: exit %d\n%s", p.Name, code, p.Output())
		}
	}
}

// metricsAddr waits for p's metrics server and returns its base URL.
func metricsAddr(ctx context.Context, p *itest.Proc) string {
	return "http://" + p.WaitLine(ctx, "serving Prometheus metrics", func(map[string]any) bool { return true })["addr"].(string)
}

// heldPartitions returns the partitions a process holds, by its
// shardpipe_partition_held gauge, sorted.
func heldPartitions(ctx context.Context, t *testing.T, base string) []int32 {
	t.Helper()
	_, fams := scrapeMetrics(ctx, t, base)
	held := map[int32]bool{}
	for _, m := range fams["shardpipe_partition_held"].GetMetric() {
		if m.GetGauge().GetValue() != 1 {
			continue
		}
		for _, l := range m.GetLabel() {
			if l.GetName() == "partition" {
				var n int32
				fmt.Sscan(l.GetValue(), &n)
				held[n] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(held))
}

// awaitStable waits until the broker describes group as Stable.
func awaitStable(ctx context.Context, t *testing.T, brokers []string, group, protocol string) {
	t.Helper()
	adm := integration.NewAdmin(t, brokers)
	for {
		var state string
		if protocol == "consumer" {
			gs, err := adm.DescribeConsumerGroups(ctx, group)
			if err == nil {
				state = gs[group].State
			}
		} else {
			gs, err := adm.DescribeGroups(ctx, group)
			if err == nil {
				state = gs[group].State
			}
		}
		if state == "Stable" {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("group %s never Stable (last %q)", group, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// groupInstances returns the instance IDs of a classic group's members,
// sorted ("" for a dynamic member).
func groupInstances(ctx context.Context, t *testing.T, brokers []string, group string) []string {
	t.Helper()
	gs, err := integration.NewAdmin(t, brokers).DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range gs[group].Members {
		id := ""
		if m.InstanceID != nil {
			id = *m.InstanceID
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
