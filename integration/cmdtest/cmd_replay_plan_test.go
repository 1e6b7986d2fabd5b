package cmdtest_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdReplayStoredPlan runs `shardpipe replay` on the real servers: the
// first run of an id stores its ranges and every rerun of the id reads them.
func TestCmdReplayStoredPlan(t *testing.T) {
	t.Parallel()
	integration.Kafka(t)
	integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	t.Run("a duration ago is not planned again on a rerun", func(t *testing.T) { t.Parallel(); replayRelativeRerun(t, bin) })
	t.Run("other range flags under a used id are refused", func(t *testing.T) { t.Parallel(); replayOtherRangeRefused(t, bin) })
}

// interrupted starts a paced replay of id, waits until it has read at least
// n records, stops it with SIGTERM and returns the range its "replay range"
// line names (one partition).
func interrupted(ctx context.Context, t *testing.T, e *itest.ReplayEnv, id string, n int64, args ...string) (from, to int64) {
	t.Helper()
	p := itest.Start(t, "replay "+id, e.Bin, e.ReplayArgs(id, append(args, "--commit-every", "10")...)...)
	rg := p.WaitLine(ctx, "replay range", func(map[string]any) bool { return true })
	p.WaitLine(ctx, "replay progress", func(m map[string]any) bool { return itest.Num(m, "read") >= n })
	p.Signal(syscall.SIGTERM)
	if code := p.Wait(ctx); code != 1 {
		t.Fatalf("replay %s after SIGTERM: exit %d, want 1\n%s", id, code, p.Output())
	}
	return itest.Num(rg, "from"), itest.Num(rg, "to")
}

// replayRelativeRerun: orders timestamped over eight seconds ten minutes ago
// are replayed with --from 10m and interrupted early; the same command rerun
// later would plan a later start (past the checkpoint) but reuses the
// stored range, so every order of the first run's range is applied.
func replayRelativeRerun(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e := itest.NewReplayEnv(t, bin, 1)
	base := time.Now().Add(-10 * time.Minute)
	for i := range 40 { // 50 orders every 200ms
		e.Produce(ctx, 50, 0, base.Add(time.Duration(i)*200*time.Millisecond))
	}
	from, to := interrupted(ctx, t, e, "relative", 50, "--from", "10m", "--rate", "100")
	if to != 2000 || from >= 1500 {
		t.Fatalf("first run planned %d..%d, want a start before 1500 and the end 2000", from, to)
	}
	code, counts, out := e.Replay(ctx, "relative", "--from", "10m")
	if code != 0 {
		t.Fatalf("rerun: exit %d\n%s", code, out)
	}
	keys := e.LedgerKeys(ctx)
	for _, o := range e.Orders {
		if o.Offset >= from && !keys[o.Id] {
			t.Fatalf("order %s at offset %d, inside the first run's range %d..%d, was never applied\n%s", o.Id, o.Offset, from, to, out)
		}
	}
	if !strings.Contains(out, "reusing the ranges its first run planned") || counts[0].From != from {
		t.Fatalf("rerun: want it to log that it reuses the stored range and to start its range at %d, got %d\n%s", from, counts[0].From, out)
	}
}

// replayOtherRangeRefused: a replay from 0 is interrupted at checkpoint P;
// a run of the same id ending before P is refused with exit 2 naming the
// stored range, and changes nothing (the checkpoint keeps its epoch: the
// refused run acquired nothing). The original command then finishes.
func replayOtherRangeRefused(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e := itest.NewReplayEnv(t, bin, 1)
	e.Produce(ctx, 2000, 0, time.Now())
	interrupted(ctx, t, e, "narrowed", 300, "--from", "0", "--rate", "500")
	ckpt := checkpoint.NewRedis(e.Rdb, checkpoint.Prefix(e.Prefix+"replay:narrowed:"))
	part := checkpoint.Partition{Topic: e.Topic}
	before, err := ckpt.Load(ctx, part)
	if err != nil {
		t.Fatal(err)
	}
	if before.Offset < 100 || before.Offset >= 2000 {
		t.Fatalf("checkpoint %+v after the interrupted run, want it part-way", before)
	}
	keys := len(e.LedgerKeys(ctx))
	code, out := itest.RunCmd(ctx, bin, e.ReplayArgs("narrowed", "--from", "0", "--to", fmt.Sprint(before.Offset/2))...)
	if code != 2 || !strings.Contains(out, "0:0-2000") || !strings.Contains(out, "new --id") {
		t.Fatalf("rerun with an earlier --to: exit %d, want 2 naming the stored range 0:0-2000 and a new --id\n%s", code, out)
	}
	if after, err := ckpt.Load(ctx, part); err != nil || after != before {
		t.Fatalf("checkpoint %+v (%v) after the refused run, want %+v unchanged", after, err, before)
	}
	if n := len(e.LedgerKeys(ctx)); n != keys {
		t.Fatalf("the refused run changed the ledger: %d keys, had %d", n, keys)
	}
	code, counts, out := e.Replay(ctx, "narrowed", "--from", "0")
	if code != 0 || counts[0].Began != before.Offset {
		t.Fatalf("the original command again: exit %d, began %d; want 0, beginning at the checkpoint %d\n%s", code, counts[0].Began, before.Offset, out)
	}
	if n := len(e.LedgerKeys(ctx)); n != 2000 {
		t.Fatalf("ledger holds %d keys, want 2000", n)
	}
}
