package cmdtest_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/sink"
)

// TestCmdLedgerManifest runs the binary on the real broker and Redis. The
// first replay on a ledger prefix writes its manifest (--effect totals);
// a replay given --effect none, and a run given --key-space per-topic, are
// refused (exit 2) naming the stored and the given setting and the fix,
// touching nothing; a replay given no --effect takes the manifest's, so
// the totals of orders produced since are exact; another --totals-hash,
// and SHARDPIPE_EFFECT=none (a variable counts as given), are refused the
// same way; --ledger-change replaces the manifest on purpose; and a ledger
// without a manifest (made before manifests) gets one, with a log line.
func TestCmdLedgerManifest(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 1)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	ledger, own, hash := prefix+"l:", prefix+"own:", prefix+"totals"
	b := strings.Join(brokers, ",")
	cents := regexp.MustCompile(`(\d+) cents`)
	var want int64 // the exactly-once totals produce reports, summed
	produce := func(n int) {
		t.Helper()
		code, out := itest.RunCmd(ctx, bin, "produce", "--brokers", b, "--topic", topic, "--count", strconv.Itoa(n))
		m := cents.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("produce: exit %d\n%s", code, out)
		}
		c, _ := strconv.ParseInt(m[1], 10, 64)
		want += c
	}
	replay := func(id string, args ...string) (int, string) {
		return itest.RunCmd(ctx, bin, append([]string{"replay", "--brokers", b, "--topic", topic, "--id", id, "--from", "0",
			"--redis", addr, "--ledger-prefix", ledger, "--dlq-prefix", own, "--on-poison", "stop"}, args...)...)
	}
	manifest := func() sink.Manifest {
		t.Helper()
		m, ok, err := sink.ReadManifest(ctx, rdb, sink.ManifestKey(own, ledger))
		if err != nil || !ok {
			t.Fatalf("manifest: %v, %v", ok, err)
		}
		return m
	}
	total := func() int64 {
		t.Helper()
		vals, err := rdb.HVals(ctx, hash).Result()
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, v := range vals {
			n, _ := strconv.ParseInt(v, 10, 64)
			sum += n
		}
		return sum
	}

	produce(20)
	if code, out := replay("r1", "--effect", "totals", "--totals-hash", hash); code != 0 {
		t.Fatalf("first replay: exit %d\n%s", code, out)
	}
	if m := manifest(); m.Effect != "totals" || m.TotalsHash != hash || m.KeySpace != "shared" || m.ClaimFormat != sink.ClaimFormat {
		t.Fatalf("manifest %+v, want totals into %s, shared", m, hash)
	}
	if got := total(); got != want {
		t.Fatalf("totals %d, want %d", got, want)
	}

	produce(10)
	code, out := replay("r2", "--effect", "none")
	if code != 2 || !strings.Contains(out, `"none": the ledger under --ledger-prefix (SHARDPIPE_LEDGER_PREFIX) "`+ledger+`" was made with "totals"`) ||
		!strings.Contains(out, "--ledger-change") {
		t.Fatalf("replay --effect none on a totals ledger: exit %d, want 2 naming both effects and the fix\n%s", code, out)
	}
	code, out = itest.RunCmd(ctx, bin, "run", "--brokers", b, "--topic", topic, "--group", integration.Group(t), "--redis", addr,
		"--ledger-prefix", ledger, "--dlq-prefix", own, "--key-space", "per-topic")
	if code != 2 || !strings.Contains(out, `"per-topic": the ledger under`) || !strings.Contains(out, `was made with "shared"`) {
		t.Fatalf("run --key-space per-topic on a shared ledger: exit %d, want 2 naming both key spaces\n%s", code, out)
	}
	// Another --totals-hash is refused as another effect is: its totals
	// would start from zero beside the ledger's claims.
	other := prefix + "other-totals"
	code, out = replay("r2h", "--totals-hash", other)
	if code != 2 || !strings.Contains(out, `--totals-hash (SHARDPIPE_TOTALS_HASH) "`+other+`": the ledger under`) ||
		!strings.Contains(out, `was made with "`+hash+`"`) {
		t.Fatalf("replay --totals-hash %s on a ledger totalling into %s: exit %d, want 2 naming both hashes\n%s", other, hash, code, out)
	}
	// A variable counts as given, as its flag does: SHARDPIPE_EFFECT=none
	// is refused, not taken for "not given" and overridden by the manifest.
	env := exec.CommandContext(ctx, bin, "replay", "--brokers", b, "--topic", topic, "--id", "r2e", "--from", "0",
		"--redis", addr, "--ledger-prefix", ledger, "--dlq-prefix", own, "--on-poison", "stop")
	env.Env = append(itest.WithoutShardpipeEnv(), "SHARDPIPE_EFFECT=none")
	raw, _ := env.CombinedOutput()
	if code, out := env.ProcessState.ExitCode(), string(raw); code != 2 || !strings.Contains(out, `"none": the ledger under`) ||
		!strings.Contains(out, `was made with "totals"`) {
		t.Fatalf("SHARDPIPE_EFFECT=none on a totals ledger: exit %d, want 2 naming both effects\n%s", code, out)
	}
	if got := total(); got == want {
		t.Fatalf("totals %d moved while the refused commands ran", got)
	}
	if n, err := rdb.Exists(ctx, other).Result(); err != nil || n != 0 {
		t.Fatalf("the refused --totals-hash %s was written", other)
	}

	if code, out := replay("r3"); code != 0 || !strings.Contains(out, "effect=totals") {
		t.Fatalf("replay with no --effect: exit %d, want 0 taking the manifest's effect\n%s", code, out)
	}
	if got := total(); got != want {
		t.Fatalf("totals %d after a replay with no --effect, want %d: it must take the manifest's totals", got, want)
	}

	if code, out := replay("r4", "--effect", "none", "--ledger-change"); code != 0 {
		t.Fatalf("replay --ledger-change: exit %d\n%s", code, out)
	}
	var m sink.Manifest
	raw, _ = rdb.Get(ctx, sink.ManifestKey(own, ledger)).Bytes()
	if err := json.Unmarshal(raw, &m); err != nil || m.Effect != "none" {
		t.Fatalf("manifest after --ledger-change: %s, want effect none", raw)
	}

	// A ledger made before manifests (claims, no manifest key) gets one
	// from the settings given, and says so.
	if err := rdb.Del(ctx, sink.ManifestKey(own, ledger)).Err(); err != nil {
		t.Fatal(err)
	}
	code, out = replay("r5", "--effect", "totals", "--totals-hash", hash, "--log-format", "json")
	if code != 0 || !strings.Contains(out, "ledger manifest written: the ledger had none (new, or made before manifests)") {
		t.Fatalf("replay on a ledger without a manifest: exit %d, want 0 logging the manifest written\n%s", code, out)
	}
	if m := manifest(); m.Effect != "totals" || m.TotalsHash != hash {
		t.Fatalf("manifest written for the ledger made before manifests: %+v, want totals into %s", m, hash)
	}

	// Claims of a newer format than this build reads are refused, with
	// the ledger's own settings too: they would be misread.
	newer := manifest()
	newer.ClaimFormat, newer.CreatedBy = sink.ClaimFormat+1, "shardpipe v9"
	if _, err := sink.WriteManifest(ctx, rdb, sink.ManifestKey(own, ledger), newer, true); err != nil {
		t.Fatal(err)
	}
	code, out = replay("r6")
	if code != 2 || !strings.Contains(out, "holds claims of format "+strconv.Itoa(newer.ClaimFormat)+", written by shardpipe v9") {
		t.Fatalf("replay on a ledger of claim format %d: exit %d, want 2 naming the format and its writer\n%s", newer.ClaimFormat, code, out)
	}
}
