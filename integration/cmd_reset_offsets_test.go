package integration_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
)

// TestCmdResetOffsets: reset-offsets refuses while the group has a member
// (classic and KIP-848 consumer protocol), and once the member has left moves
// the committed offsets to earliest, a time, an offset or latest; --dry-run
// prints the table and commits nothing.
func TestCmdResetOffsets(t *testing.T) {
	t.Parallel()
	integration.Kafka(t)
	integration.Redis(t)
	bin := buildShardpipe(t)
	for _, proto := range []string{"classic", "consumer"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			resetOffsets(t, bin, proto)
		})
	}
}

func resetOffsets(t *testing.T, bin, proto string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := newReplayEnv(t, bin, 2)
	h1 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	e.produce(ctx, 40, 0, h1.Add(-time.Hour))
	e.produce(ctx, 40, 0, h1)
	group := integration.Group(t)
	opts := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(e.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit()}
	if proto == "consumer" {
		opts = append(opts, kgo.ServerSideBalancer())
	}
	member, err := kgo.NewClient(append(opts, kgo.SeedBrokers(e.brokers...))...)
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	for n := 0; n < len(e.orders); {
		fs := member.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consume: %v", ctx.Err())
		}
		n += fs.NumRecords()
	}
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	adm := integration.NewAdmin(t, e.brokers)
	ends := map[int32]int64{}
	atH1 := map[int32]int64{}
	for _, o := range e.orders {
		ends[o.partition] = max(ends[o.partition], o.offset+1)
		if o.at.Equal(h1) {
			if cur, ok := atH1[o.partition]; !ok || o.offset < cur {
				atH1[o.partition] = o.offset
			}
		}
	}
	committed := func() map[int32]int64 {
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		m := map[int32]int64{}
		offs.Each(func(o kadm.OffsetResponse) { m[o.Partition] = o.At })
		return m
	}
	reset := func(args ...string) (int, string) {
		return runCmd(ctx, bin, append([]string{"reset-offsets", "--brokers", strings.Join(e.brokers, ","),
			"--group", group, "--topic", e.topic}, args...)...)
	}
	same := func(a, b map[int32]int64) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

	if code, out := reset("--to", "earliest"); code != 1 || !strings.Contains(out, "active member") {
		t.Fatalf("with a member: exit %d, want 1 and a line about the active member\n%s", code, out)
	}
	if got := committed(); !same(got, ends) {
		t.Fatalf("refused reset moved offsets: %v, want %v", got, ends)
	}
	member.Close() // leaves the group

	code, out := reset("--to", "earliest", "--dry-run")
	if code != 0 || !strings.Contains(out, "BEFORE") || !strings.Contains(out, "nothing committed") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	rows := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		rows[strings.Join(strings.Fields(l), " ")] = true
	}
	for p, end := range ends {
		if !rows[fmt.Sprintf("%d %d 0", p, end)] {
			t.Fatalf("dry run table has no row %d: %d -> 0\n%s", p, end, out)
		}
	}
	if got := committed(); !same(got, ends) {
		t.Fatalf("dry run moved offsets: %v, want %v", got, ends)
	}
	zero := map[int32]int64{0: 0, 1: 0}
	three := map[int32]int64{0: 3, 1: 3}
	tests := []struct {
		to   string
		want map[int32]int64
	}{
		{"earliest", zero},
		{h1.UTC().Format(time.RFC3339Nano), atH1},
		{"latest", ends},
		{"3", three},
	}
	for _, tc := range tests {
		if code, out := reset("--to", tc.to); code != 0 {
			t.Fatalf("--to %s: exit %d\n%s", tc.to, code, out)
		}
		if got := committed(); !same(got, tc.want) {
			t.Fatalf("--to %s: committed %v, want %v", tc.to, got, tc.want)
		}
	}
}
