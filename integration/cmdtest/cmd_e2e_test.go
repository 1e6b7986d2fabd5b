package cmdtest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdStopAndRestart runs the shardpipe binary as separate processes on
// the real servers: produce writes 10,000 orders plus 10% re-sends while run
// consumes; run is stopped mid-way (SIGTERM: drain and commit; SIGKILL: a
// crash) and started again. At the end the ledger holds exactly the unique
// orders, the totals hash equals the sums computed from the records, and
// status shows lag 0.
func TestCmdStopAndRestart(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	tests := []struct {
		name        string
		sig         syscall.Signal
		commitEvery string
	}{
		{"sigterm", syscall.SIGTERM, "100"},
		{"sigkill", syscall.SIGKILL, "300"}, // more landed-but-uncommitted work at the kill
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stopAndRestart(t, bin, brokers, addr, tc.sig, tc.commitEvery)
		})
	}
}

func stopAndRestart(t *testing.T, bin string, brokers []string, addr string, sig syscall.Signal, commitEvery string) {
	const (
		count   = 10000
		dups    = 1000
		records = count + dups
	)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 4)
	integration.CreateDeadLetterTopic(t, brokers, topic, 4)
	rdb := integration.NewRedisClient(t, addr)
	base := integration.RedisPrefix(t, rdb)
	// The totals hash outside the ledger's key space: no business key can name it.
	prefix, group, hash := base+"l:", integration.Group(t), base+"totals"
	b := strings.Join(brokers, ",")
	runArgs := []string{"run", "--brokers", b, "--topic", topic, "--group", group, "--redis", addr,
		"--ledger-prefix", prefix, "--effect", "totals", "--totals-hash", hash,
		"--commit-every", commitEvery, "--commit-interval", "1s", "--report-interval", "100ms",
		"--session-timeout", "6s", "--shutdown-timeout", "20s", "--log-format", "json"}

	run1 := itest.Start(t, "run 1", bin, runArgs...)
	run1.WaitLine(ctx, "partitions assigned", func(map[string]any) bool { return true })
	summaryFile := filepath.Join(t.TempDir(), "summary.json")
	produce := itest.Start(t, "produce", bin, "produce", "--brokers", b, "--topic", topic, "--count", "10000",
		"--duplicates", "0.1", "--rate", "2000", "--seed", "11", "--summary-json", summaryFile)

	// Mid-way: effects are landing while produce is still writing.
	run1.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "applied") >= 1500 })
	select {
	case <-produce.Done:
		t.Fatalf("produce finished before run 1 was stopped; the stop would not be mid-way")
	default:
	}
	run1.Signal(sig)
	var attempts1, suppressed1 int64
	if sig == syscall.SIGTERM {
		s := run1.WaitLine(ctx, "summary", func(map[string]any) bool { return true })
		attempts1, suppressed1 = itest.Num(s, "attempts"), itest.Num(s, "suppressed")
		if code := run1.Wait(ctx); code != 0 {
			t.Fatalf("run 1 after SIGTERM: exit %d, want 0\n%s", code, run1.Output())
		}
	} else {
		run1.Wait(ctx)
	}
	if code := produce.Wait(ctx); code != 0 {
		t.Fatalf("produce: exit %d\n%s", code, produce.Output())
	}

	// What exactly-once must give, from the records themselves; produce's
	// own summary must agree.
	exp := itest.ReadTopic(ctx, t, brokers, topic, records)
	if exp.Records != records || exp.Unique != count {
		t.Fatalf("topic holds %d records with %d order IDs, want %d and %d", exp.Records, exp.Unique, records, count)
	}
	var sum struct {
		Records, Unique, Duplicates int
		Totals                      map[string]int64
	}
	raw, err := os.ReadFile(summaryFile)
	if err == nil {
		err = json.Unmarshal(raw, &sum)
	}
	if err != nil {
		t.Fatalf("produce --summary-json: %v", err)
	}
	if sum.Records != records || sum.Unique != count || sum.Duplicates != dups || len(sum.Totals) != len(exp.Totals) {
		t.Fatalf("produce summary %d/%d/%d over %d customers, want %d/%d/%d over %d", sum.Records, sum.Unique,
			sum.Duplicates, len(sum.Totals), records, count, dups, len(exp.Totals))
	}
	for c, v := range exp.Totals {
		if sum.Totals[c] != v {
			t.Fatalf("produce summary totals[%s] = %d, the records say %d", c, sum.Totals[c], v)
		}
	}

	// Where run 1 left things.
	before := itest.StatusJSON(ctx, t, bin, brokers, group, topic)
	committed := before.Committed()
	var committedSum int64
	for p, o := range committed {
		committedSum += max(o, 0)
		committed[p] = max(o, 0)
	}
	inLedger := itest.RedisKeySet(ctx, t, rdb, prefix, "ord-*")
	ledgerBefore := len(inLedger)
	replays := ledgerBefore - exp.UniqueBefore(committed) // landed past the last commit
	// What run 2 must do, from the records past the committed offsets and
	// the ledger as Redis holds it now: not from any count shardpipe keeps.
	wantApplied2, wantSuppressed2 := exp.RereadOutcome(committed, inLedger)
	t.Logf("after %v: committed %d of %d records, ledger %d keys, landed past the commit %d; run 2 must apply %d and suppress %d",
		sig, committedSum, records, ledgerBefore, replays, wantApplied2, wantSuppressed2)

	// Run 2 resumes from the committed offsets; everything was produced
	// before it started, so lag 0 means every record is committed.
	run2 := itest.Start(t, "run 2", bin, runArgs...)
	run2.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "lag") == 0 && m["lag_err"] == nil })
	run2.Signal(syscall.SIGTERM)
	s := run2.WaitLine(ctx, "summary", func(map[string]any) bool { return true })
	if code := run2.Wait(ctx); code != 0 {
		t.Fatalf("run 2 after SIGTERM: exit %d\n%s", code, run2.Output())
	}
	attempts2, applied2, suppressed2 := itest.Num(s, "attempts"), itest.Num(s, "applied"), itest.Num(s, "suppressed")
	t.Logf("run 2: attempts %d applied %d suppressed %d", attempts2, applied2, suppressed2)

	if n := itest.CountRedisKeys(ctx, t, rdb, prefix+"ord-*"); n != count {
		t.Fatalf("ledger holds %d keys, want exactly the %d unique orders", n, count)
	}
	itest.CheckTotals(ctx, t, rdb, hash, exp)
	after := itest.StatusJSON(ctx, t, bin, brokers, group, topic)
	if after.Lag != 0 || len(after.Partitions) != 4 {
		t.Fatalf("status: lag %d over %d partitions, want 0 over 4: %v", after.Lag, len(after.Partitions), after)
	}
	for _, p := range after.Partitions {
		if p.Committed != p.LogEnd {
			t.Fatalf("status: partition %d committed %d, log end %d", p.Partition, p.Committed, p.LogEnd)
		}
	}
	if attempts2 != records-committedSum {
		t.Fatalf("run 2 attempted %d records, want the %d after the committed offsets", attempts2, records-committedSum)
	}
	// Run 2 counts every order whose first record lies past run 1's commits:
	// those it applied, and those run 1 applied but never committed past
	// (they come back as redelivered, and are suppressed as well).
	fresh := int64(count - exp.UniqueBefore(committed))
	if applied2 != fresh || wantApplied2+int64(replays) != fresh {
		t.Fatalf("run 2 applied %d, want the %d orders whose first record lies past run 1's commits (%d new to the ledger, %d landed past the commit)",
			applied2, fresh, wantApplied2, replays)
	}
	if suppressed2 != wantSuppressed2 {
		t.Fatalf("run 2 suppressed %d; past the committed offsets %d records repeat an order the ledger held or the range met earlier",
			suppressed2, wantSuppressed2)
	}
	switch sig {
	case syscall.SIGTERM:
		// A clean stop commits everything that landed: nothing is seen twice.
		if replays != 0 || attempts1+attempts2 != records || suppressed1+suppressed2 != dups {
			t.Fatalf("after SIGTERM: landed past the commit %d, attempts %d+%d, suppressed %d+%d; want 0, %d, %d",
				replays, attempts1, attempts2, suppressed1, suppressed2, records, dups)
		}
	case syscall.SIGKILL:
		// A crash leaves landed effects past the last commit; run 2 sees
		// them again and the ledger suppresses them.
		if replays <= 0 {
			t.Fatalf("after SIGKILL: landed past the commit %d, want > 0: the kill left nothing to replay", replays)
		}
	}
}
