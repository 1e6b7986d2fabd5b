package cmdtest_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/sink"
)

// TestCmdReplay runs `shardpipe replay` as a process on the real servers.
func TestCmdReplay(t *testing.T) {
	t.Parallel()
	integration.Kafka(t)
	integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	t.Run("restores deleted keys, dry run equal and read-only", func(t *testing.T) { t.Parallel(); replayRestores(t, bin) })
	t.Run("sigkill and rerun continues", func(t *testing.T) { t.Parallel(); replayKillRerun(t, bin, syscall.SIGKILL) })
	t.Run("sigterm and rerun continues", func(t *testing.T) { t.Parallel(); replayKillRerun(t, bin, syscall.SIGTERM) })
	t.Run("time ranges", func(t *testing.T) { t.Parallel(); replayTimeRanges(t, bin) })
	t.Run("fenced by a newer run of the same id", func(t *testing.T) { t.Parallel(); replayFencedCmd(t, bin) })
}

// seeded produces 2,000 orders plus every 10th again on 4 partitions, applies
// them all with a first replay, then deletes the ledger entries of every 7th
// order and takes their amounts out of the totals, as a Redis outage that
// lost those writes would. It returns the deleted orders.
func seeded(ctx context.Context, t *testing.T, bin string) (*itest.ReplayEnv, []itest.Order) {
	e := itest.NewReplayEnv(t, bin, 4)
	e.Produce(ctx, 2000, 10, time.Now())
	code, counts, out := e.Replay(ctx, "initial", "--from", "0")
	if applied, suppressed := counts.Total(); code != 0 || applied != 2000 || suppressed != 200 {
		t.Fatalf("initial replay: exit %d applied %d suppressed %d, want 0, 2000, 200\n%s", code, applied, suppressed, out)
	}
	var lost []itest.Order
	for i, o := range e.Unique() {
		if i%7 != 0 {
			continue
		}
		lost = append(lost, o)
		if err := e.Rdb.Del(ctx, e.Ledger()+o.Id).Err(); err != nil {
			t.Fatal(err)
		}
		if err := e.Rdb.HIncrBy(ctx, e.Hash(), o.Customer, -o.Cents).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return e, lost
}

// replayRestores: only the lost orders apply again and the totals are whole;
// a dry run first writes nothing and predicts the same counts per partition.
func replayRestores(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e, lost := seeded(ctx, t, bin)

	before := e.Snapshot(ctx)
	code, dry, out := e.Replay(ctx, "restore", "--from", "0", "--dry-run")
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if after := e.Snapshot(ctx); !maps.Equal(before, after) {
		t.Fatalf("the dry run changed Redis: %d keys before, %d after", len(before), len(after))
	}
	if !strings.Contains(out, "WOULD-APPLY") {
		t.Fatalf("dry run printed no table:\n%s", out)
	}

	code, real, out := e.Replay(ctx, "restore", "--from", "0")
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, out)
	}
	if !maps.Equal(dry, real) {
		t.Fatalf("dry run counts %v differ from the replay's %v", dry, real)
	}
	applied, suppressed := real.Total()
	if applied != int64(len(lost)) || suppressed != int64(len(e.Orders)-len(lost)) {
		t.Fatalf("replay applied %d suppressed %d, want %d and %d", applied, suppressed, len(lost), len(e.Orders)-len(lost))
	}
	// Exactly the lost orders were claimed by this replay; every other
	// claim is the initial one's.
	isLost := map[string]bool{}
	for _, o := range lost {
		isLost[o.Id] = true
	}
	for _, o := range e.Unique() {
		s, err := e.Rdb.Get(ctx, e.Ledger()+o.Id).Result()
		if err != nil {
			t.Fatalf("ledger entry of %s: %v", o.Id, err)
		}
		c, err := sink.DecodeClaim(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "replay:restore", false: "replay:initial"}[isLost[o.Id]]; c.Member != want {
			t.Fatalf("%s claimed by %q, want %q", o.Id, c.Member, want)
		}
	}
	e.CheckTotalsEqual(ctx, itest.TotalsOf(e.Unique()))
}

// replayKillRerun stops a paced replay part-way (SIGKILL: a crash; SIGTERM:
// it commits what landed and exits 1 saying it was interrupted) and runs it
// again: the rerun begins at the checkpoint and the end state is the
// uninterrupted one.
func replayKillRerun(t *testing.T, bin string, sig syscall.Signal) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e, lost := seeded(ctx, t, bin)
	p := itest.Start(t, "replay 1", bin, e.ReplayArgs("again", "--from", "0", "--rate", "1500", "--commit-every", "50")...)
	p.WaitLine(ctx, "replay progress", func(m map[string]any) bool { return itest.Num(m, "read") >= 600 })
	p.Signal(sig)
	code := p.Wait(ctx)
	stopped := p.Output()
	reached := map[int32]int64{}
	if sig == syscall.SIGTERM {
		if code != 1 || !strings.Contains(p.Output(), "interrupted") {
			t.Fatalf("after SIGTERM: exit %d, want 1 and a line saying it was interrupted\n%s", code, p.Output())
		}
		for m := range p.Lines {
			if m["msg"] == "replay partition" {
				reached[int32(itest.Num(m, "partition"))] = itest.Num(m, "reached")
			}
		}
	}

	code, counts, out := e.Replay(ctx, "again", "--from", "0")
	if code != 0 {
		t.Fatalf("rerun: exit %d\n%s", code, out)
	}
	resumed := int64(0)
	for p, c := range counts {
		resumed += c.Began - c.From
		if r, ok := reached[p]; ok && c.Began != r {
			t.Fatalf("partition %d: the rerun began at %d, want %d where the stopped run committed\n%s\n%s", p, c.Began, r, stopped, out)
		}
	}
	if resumed < 300 {
		t.Fatalf("the rerun began %d records past the range start, want it to continue from the checkpoint (>= 300)\n%s", resumed, out)
	}
	keys := e.LedgerKeys(ctx)
	if len(keys) != len(e.Unique()) {
		t.Fatalf("ledger holds %d keys, want %d", len(keys), len(e.Unique()))
	}
	for _, o := range lost {
		if !keys[o.Id] {
			t.Fatalf("lost order %s not restored", o.Id)
		}
	}
	e.CheckTotalsEqual(ctx, itest.TotalsOf(e.Unique()))
}

// replayTimeRanges produces three hours of orders with known timestamps and
// replays by time into empty ledgers: exactly the orders inside [from, to)
// apply. A range older than --ttl is refused without --force.
func replayTimeRanges(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e := itest.NewReplayEnv(t, bin, 2)
	now := time.Now().Truncate(time.Second)
	h3, h2, h1 := now.Add(-3*time.Hour), now.Add(-2*time.Hour), now.Add(-1*time.Hour)
	for _, at := range []time.Time{h3, h2, h1} {
		e.Produce(ctx, 60, 0, at)
	}
	rfc := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	tests := []struct {
		name     string
		args     []string
		from, to time.Time // orders with from <= at < to
	}{
		{"from and to by time, to exclusive", []string{"--from", rfc(h2), "--to", rfc(h1)}, h2, h1},
		{"from by time to the end", []string{"--from", rfc(h2)}, h2, now.Add(time.Hour)},
		{"from a duration ago", []string{"--from", "150m"}, h2, now.Add(time.Hour)},
		{"from an offset to a time", []string{"--from", "0", "--to", rfc(h2)}, h3, h2},
		{"one millisecond after a group", []string{"--from", rfc(h3.Add(time.Millisecond)), "--to", rfc(h1.Add(time.Millisecond))}, h2, now},
	}
	for i, tc := range tests {
		ledger := e.Prefix + "t" + string(rune('a'+i)) + ":"
		args := append(tc.args, "--ledger-prefix", ledger, "--totals-hash", e.Prefix+"t"+string(rune('a'+i))+"-totals")
		code, counts, out := e.Replay(ctx, "time-"+string(rune('a'+i)), args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.name, code, out)
		}
		want := map[string]bool{}
		for _, o := range e.Orders {
			if !o.At.Before(tc.from) && o.At.Before(tc.to) {
				want[o.Id] = true
			}
		}
		got := map[string]bool{}
		it := e.Rdb.Scan(ctx, 0, ledger+"o-*", 1000).Iterator()
		for it.Next(ctx) {
			got[strings.TrimPrefix(it.Val(), ledger)] = true
		}
		if applied, _ := counts.Total(); !maps.Equal(got, want) || applied != int64(len(want)) {
			t.Fatalf("%s: replay applied %d orders (%d in the ledger), want exactly the %d produced in [%s, %s)\n%s",
				tc.name, applied, len(got), len(want), rfc(tc.from), rfc(tc.to), out)
		}
	}

	code, out := itest.RunCmd(ctx, bin, e.ReplayArgs("no-such", "--from", "0", "--partition-ids", "1,5")...)
	if code != 2 || !strings.Contains(out, "partition 5") {
		t.Fatalf("--partition-ids 1,5 on a topic of 2: exit %d, want 2 naming partition 5\n%s", code, out)
	}
	code, out = itest.RunCmd(ctx, bin, e.ReplayArgs("too-old", "--from", "0", "--ttl", "150m")...)
	if code != 2 || !strings.Contains(out, "older than --ttl") || !strings.Contains(out, "--force") {
		t.Fatalf("a range older than --ttl: exit %d, want 2 with a line naming --force\n%s", code, out)
	}
	if n := itest.CountRedisKeys(ctx, t, e.Rdb, e.Ledger()+"*"); n != 0 {
		t.Fatalf("the refused replay wrote %d ledger keys", n)
	}
	code, out = itest.RunCmd(ctx, bin, e.ReplayArgs("too-old", "--from", "0", "--ttl", "150m", "--force")...)
	if code != 0 || itest.CountRedisKeys(ctx, t, e.Rdb, e.Ledger()+"*") != len(e.Orders) {
		t.Fatalf("with --force: exit %d, want 0 and every order applied\n%s", code, out)
	}

	// The TTL rule looks at the real risk: old records whose keys the ledger
	// holds (renewed by the replay that just met them) cannot apply again, so
	// the same range replays without --force, suppressing everything.
	code, counts, out := e.Replay(ctx, "old-but-held", "--from", "0", "--ttl", "150m")
	if applied, _ := counts.Total(); code != 0 || applied != 0 {
		t.Fatalf("an old range whose keys the ledger holds: exit %d, applied %d; want 0 and 0\n%s", code, applied, out)
	}
	// One old key gone from the ledger: that record would apply again.
	lost := e.Orders[0] // produced 3h ago
	if err := e.Rdb.Del(ctx, e.Ledger()+lost.Id).Err(); err != nil {
		t.Fatal(err)
	}
	code, out = itest.RunCmd(ctx, bin, e.ReplayArgs("old-one-missing", "--from", "0", "--ttl", "150m")...)
	want := fmt.Sprintf("partition %d: 1 of the", lost.Partition)
	if code != 2 || !strings.Contains(out, want) || !strings.Contains(out, fmt.Sprintf("first at offset %d", lost.Offset)) {
		t.Fatalf("an old record without its ledger entry: exit %d, want 2 naming %q at offset %d\n%s", code, want, lost.Offset, out)
	}
}

// replayFencedCmd: a second run of the same id takes over; the first, slowed
// by --rate, is fenced at its next commit and exits 1 naming the fence.
func replayFencedCmd(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e := itest.NewReplayEnv(t, bin, 2)
	e.Produce(ctx, 3000, 0, time.Now())
	old := itest.Start(t, "older", bin, e.ReplayArgs("twice", "--from", "0", "--rate", "1000", "--commit-every", "20")...)
	old.WaitLine(ctx, "replay progress", func(m map[string]any) bool { return itest.Num(m, "read") >= 100 })
	code, counts, out := e.Replay(ctx, "twice", "--from", "0")
	if code != 0 {
		t.Fatalf("newer replay: exit %d\n%s", code, out)
	}
	if code := old.Wait(ctx); code != 1 || !strings.Contains(old.Output(), "was fenced") ||
		!strings.Contains(old.Output(), "stale epoch") {
		t.Fatalf("older replay: exit %d, want 1 with a line saying it was fenced (stale epoch)\n%s", code, old.Output())
	}
	if applied, _ := counts.Total(); applied == 0 {
		t.Fatalf("the newer replay applied nothing\n%s", out)
	}
	if n := itest.CountRedisKeys(ctx, t, e.Rdb, e.Ledger()+"*"); n != 3000 {
		t.Fatalf("ledger holds %d keys, want 3000", n)
	}
	e.CheckTotalsEqual(ctx, itest.TotalsOf(e.Unique()))
}
