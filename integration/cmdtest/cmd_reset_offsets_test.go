package cmdtest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/sink"
)

// TestCmdResetOffsets: reset-offsets refuses while the group has a member
// (classic and KIP-848 consumer protocol), and once the member has left moves
// the committed offsets to earliest, a time, an offset or latest; --dry-run
// prints the table and commits nothing.
func TestCmdResetOffsets(t *testing.T) {
	t.Parallel()
	integration.Kafka(t)
	integration.Redis(t)
	bin := itest.BuildShardpipe(t)
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
	e := itest.NewReplayEnv(t, bin, 2)
	h1 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	e.Produce(ctx, 40, 0, h1.Add(-time.Hour))
	e.Produce(ctx, 40, 0, h1)
	group := integration.Group(t)
	opts := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(e.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit()}
	if proto == "consumer" {
		opts = append(opts, kgo.ServerSideBalancer())
	}
	member, err := kgo.NewClient(append(opts, kgo.SeedBrokers(e.Brokers...))...)
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	for n := 0; n < len(e.Orders); {
		fs := member.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consume: %v", ctx.Err())
		}
		n += fs.NumRecords()
	}
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	adm := integration.NewAdmin(t, e.Brokers)
	ends := map[int32]int64{}
	atH1 := map[int32]int64{}
	for _, o := range e.Orders {
		ends[o.Partition] = max(ends[o.Partition], o.Offset+1)
		if o.At.Equal(h1) {
			if cur, ok := atH1[o.Partition]; !ok || o.Offset < cur {
				atH1[o.Partition] = o.Offset
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
		return itest.RunCmd(ctx, bin, append([]string{"reset-offsets", "--brokers", strings.Join(e.Brokers, ","),
			"--group", group, "--topic", e.Topic}, args...)...)
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

// TestCmdResetOffsetsTTL: moving a group back over records older than --ttl
// is refused (exit 2, naming the partition and the offsets, the offsets
// unmoved) when the ledger lacks some of their keys, since those would apply
// again; --dry-run only warns, --force moves anyway, and a move over old
// records whose keys the ledger holds needs no --force.
func TestCmdResetOffsetsTTL(t *testing.T) {
	t.Parallel()
	integration.Kafka(t)
	integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := itest.NewReplayEnv(t, bin, 1)
	e.Produce(ctx, 20, 0, time.Now().Add(-3*time.Hour))
	e.Produce(ctx, 20, 0, time.Now())
	group := integration.Group(t)
	adm := integration.NewAdmin(t, e.Brokers)
	end := int64(len(e.Orders))
	commit := func(at int64) {
		t.Helper()
		offs := kadm.Offsets{}
		offs.AddOffset(e.Topic, 0, at, -1)
		if _, err := adm.CommitOffsets(ctx, group, offs); err != nil {
			t.Fatal(err)
		}
	}
	committed := func() int64 {
		t.Helper()
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := offs.Lookup(e.Topic, 0)
		return o.At
	}
	reset := func(args ...string) (int, string) {
		return itest.RunCmd(ctx, bin, append([]string{"reset-offsets", "--brokers", strings.Join(e.Brokers, ","),
			"--group", group, "--topic", e.Topic, "--redis", e.Addr, "--ledger-prefix", e.Ledger(), "--ttl", "150m"}, args...)...)
	}
	commit(end)

	// The ledger holds none of the old keys: all 20 would apply again.
	code, out := reset("--to", "earliest")
	if code != 2 || !strings.Contains(out, "partition 0: 20 of the 20 records older than --ttl") ||
		!strings.Contains(out, "first at offset 0, last at 19") || !strings.Contains(out, "--force") {
		t.Fatalf("reset over old records without ledger entries: exit %d, want 2 naming partition 0, offsets 0..19 and --force\n%s", code, out)
	}
	if c := committed(); c != end {
		t.Fatalf("the refused reset moved the offset to %d", c)
	}
	if code, out := reset("--to", "earliest", "--dry-run"); code != 0 || !strings.Contains(out, "would apply again") {
		t.Fatalf("dry run: exit %d, want 0 with a warning\n%s", code, out)
	}
	// A move back over recent records only needs no ledger at all.
	if code, out := itest.RunCmd(ctx, bin, "reset-offsets", "--brokers", strings.Join(e.Brokers, ","), "--group", group,
		"--topic", e.Topic, "--redis", "127.0.0.1:1", "--ttl", "150m", "--to", "30"); code != 0 {
		t.Fatalf("reset over recent records: exit %d\n%s", code, out)
	}
	commit(end)

	// A per-topic ledger, as its manifest says (under the --dlq-prefix run
	// was given): without --key-space the check asks for its keys
	// (<prefix><topic>:<key>), and finds them; a --key-space that says
	// otherwise is refused, naming the manifest.
	own := e.Ledger() + "own:"
	manifest := sink.ManifestKey(own, e.Ledger())
	if _, err := sink.WriteManifest(ctx, e.Rdb, manifest, sink.Manifest{Effect: "none", KeySpace: "per-topic"}, true); err != nil {
		t.Fatal(err)
	}
	for _, o := range e.Orders[:20] {
		if err := e.Rdb.Set(ctx, e.Ledger()+e.Topic+":"+o.Id, "{}", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := reset("--to", "earliest", "--dlq-prefix", own, "--key-space", "shared"); code != 2 || committed() != end ||
		!strings.Contains(out, "manifest") || !strings.Contains(out, "per-topic") {
		t.Fatalf("reset with a --key-space the manifest contradicts: exit %d, committed %d; want 2 naming the manifest and per-topic, nothing moved\n%s",
			code, committed(), out)
	}
	if code, out := reset("--to", "earliest", "--dlq-prefix", own); code != 0 || committed() != 0 {
		t.Fatalf("reset over old records a per-topic ledger holds: exit %d, committed %d; want 0 and 0\n%s", code, committed(), out)
	}
	if err := e.Rdb.Del(ctx, manifest).Err(); err != nil {
		t.Fatal(err)
	}
	commit(end)

	// Every old key in the ledger: nothing would apply again.
	for _, o := range e.Orders[:20] {
		if err := e.Rdb.Set(ctx, e.Ledger()+o.Id, "{}", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := reset("--to", "earliest"); code != 0 || committed() != 0 {
		t.Fatalf("reset over old records the ledger holds: exit %d, committed %d; want 0 and 0\n%s", code, committed(), out)
	}
	commit(end)
	if err := e.Rdb.Del(ctx, e.Ledger()+e.Orders[7].Id).Err(); err != nil {
		t.Fatal(err)
	}
	if code, out := reset("--to", "earliest"); code != 2 || !strings.Contains(out, "1 of the 20") ||
		!strings.Contains(out, "first at offset 7, last at 7") {
		t.Fatalf("one old key missing: exit %d, want 2 naming offset 7\n%s", code, out)
	}
	if code, out := reset("--to", "earliest", "--force"); code != 0 || committed() != 0 {
		t.Fatalf("--force: exit %d, committed %d; want 0 and 0\n%s", code, committed(), out)
	}
}
