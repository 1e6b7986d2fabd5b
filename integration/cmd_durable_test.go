package integration_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
)

// produceKeys writes n records keyed k0..k(n-1) with the value {} and
// returns each partition's end offset.
func produceKeys(ctx context.Context, t *testing.T, brokers []string, topic string, n int) map[int32]int64 {
	t.Helper()
	prod := integration.NewKafkaClient(t, brokers)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("{}")}
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	ends, err := integration.NewAdmin(t, brokers).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets: %v", err)
	}
	out := make(map[int32]int64)
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// groupCommitted returns the group's committed offset per partition of topic.
func groupCommitted(ctx context.Context, t *testing.T, brokers []string, group, topic string) map[int32]int64 {
	t.Helper()
	offs, err := integration.NewAdmin(t, brokers).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	out := make(map[int32]int64)
	for p, o := range offs[topic] {
		if o.Err == nil && o.At >= 0 {
			out[p] = o.At
		}
	}
	return out
}

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
	bin := buildShardpipe(t)
	for _, tc := range []struct {
		name, wait string
		bin        func(testing.TB) string
	}{
		{"valkey", "WAITAOF", valkeyBin},
		{"redis7", "WAIT", redisBin},
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
	primary := startServer(t, server)
	replica := startReplica(t, server, primary)
	topic := integration.CreateTopic(t, brokers, 2)
	ends := produceKeys(ctx, t, brokers, topic, 40)
	group := integration.Group(t)

	replica.signal(syscall.SIGSTOP)
	stopped := true
	defer func() {
		if stopped {
			replica.signal(syscall.SIGCONT)
		}
	}()
	run := start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
		"--redis", primary.addr, "--redis-replicas", "1", "--commit-every", "10", "--commit-interval", "100ms",
		"--on-poison", "stop", "--report-interval", "0", "--session-timeout", "6s", "--log-format", "json")
	run.waitLine(ctx, "redis durability", func(m map[string]any) bool {
		return m["wait"] == wait && num(m, "replicas") == 1 && m["local_fsync"] == (wait == "WAITAOF")
	})
	// Each partition's commit of its end offset is tried and held back.
	held := make(map[string]bool)
	for len(held) < len(ends) {
		m := run.waitLine(ctx, "commit failed; retrying", func(m map[string]any) bool {
			err, _ := m["err"].(string)
			return strings.Contains(err, "not yet durable") && strings.Contains(err, "0 of 1 replicas")
		})
		p, _ := m["partition"].(string)
		var part int32
		if _, err := fmt.Sscanf(p[strings.LastIndexByte(p, '/')+1:], "%d", &part); err != nil {
			t.Fatalf("partition %q: %v", p, err)
		}
		if num(m, "offset") == ends[part] {
			held[p] = true
		}
	}
	if n, err := primary.c.DBSize(ctx).Result(); err != nil || n < 40 {
		t.Fatalf("primary holds %d keys (%v), want the 40 ledger keys (and the fence)", n, err)
	}
	if got := groupCommitted(ctx, t, brokers, group, topic); len(got) > 0 {
		t.Fatalf("committed %v while the replica was stopped; want nothing committed", got)
	}

	replica.signal(syscall.SIGCONT)
	stopped = false
	for {
		got := groupCommitted(ctx, t, brokers, group, topic)
		if len(got) == len(ends) && got[0] == ends[0] && got[1] == ends[1] {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("committed %v after the replica continued, want %v\n%s", got, ends, run.output())
		}
		time.Sleep(50 * time.Millisecond) // poll interval: the broker's offsets
	}
	run.signal(syscall.SIGTERM)
	if code := run.wait(ctx); code != 0 {
		t.Fatalf("run exit %d, want 0\n%s", code, run.output())
	}

	// replay's checkpoint commits wait alike: with the replica stopped it
	// cannot finish; once the replica continues it does.
	replica.signal(syscall.SIGSTOP)
	stopped = true
	rep := start(t, "replay", bin, "replay", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--id", group,
		"--from", "0", "--redis", primary.addr, "--redis-replicas", "1", "--commit-every", "10", "--on-poison", "stop",
		"--log-format", "json")
	rep.waitLine(ctx, "commit failed; retrying", func(m map[string]any) bool {
		err, _ := m["err"].(string)
		return strings.Contains(err, "not yet durable")
	})
	select {
	case <-rep.done:
		t.Fatalf("replay ended (exit %d) while the replica was stopped\n%s", rep.code, rep.output())
	default:
	}
	replica.signal(syscall.SIGCONT)
	stopped = false
	if code := rep.wait(ctx); code != 0 {
		t.Fatalf("replay exit %d, want 0\n%s", code, rep.output())
	}
}
