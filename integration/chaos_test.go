package integration_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/chaos"
)

// TestChaosShort is the short variant of `make chaos`: three `shardpipe
// run` processes on a Kafka broker and a Redis of the test's own (started
// with scripts/services.sh on free ports, since the run kills and restarts
// them), 10,000 orders with 10% re-sends, and per group protocol one
// consumer SIGKILL, one zombie pause past the session timeout, one Redis
// SIGKILL and one broker restart. The independent checker must find every
// order in the ledger exactly once, the totals exact, every offset
// committed to the log end and none going backwards.
//
// SHARDPIPE_CHAOS_SEED repeats a run's schedule (the seed is logged).
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos run takes about a minute and a half")
	}
	if !integration.Required() && os.Getenv(integration.EnvKafkaBrokers) == "" {
		// It does not use the shared servers, but it is as heavy as the
		// integration tests: run it when they run.
		t.Skip("integration tests are off; " + integration.HowTo)
	}
	t.Parallel() // its servers are its own: it can overlap the tests on the shared ones
	for _, bin := range []string{"java", "redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			msg := "the chaos run starts its own servers with scripts/services.sh and needs " + bin + " on PATH"
			if integration.Required() {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := chaos.Short()
	cfg.Seed = uint64(time.Now().UnixNano()%(1<<31)) + 1
	if s := os.Getenv("SHARDPIPE_CHAOS_SEED"); s != "" {
		if cfg.Seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("SHARDPIPE_CHAOS_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (SHARDPIPE_CHAOS_SEED=%d repeats the schedule)", cfg.Seed, cfg.Seed)
	cfg.WorkDir = t.TempDir()
	cfg.Bin = buildShardpipe(t)
	cfg.Out = testWriter{t}
	cfg.Services = chaos.Services{Root: root, Dir: filepath.Join(cfg.WorkDir, "services")}
	if err := cfg.Services.PickPorts(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Line())
	if !rep.OK() {
		t.Fatalf("the chaos run broke a promise:\n%s", rep)
	}
	f := rep.Faults
	if !slices.Equal(f.Protocols, []string{"classic", "consumer"}) || f.Kills != 2 || f.ZombiePauses != 2 ||
		f.RedisRestarts != 2 || f.BrokerRestarts != 2 {
		t.Errorf("faults %+v, want both protocols and one of each fault per protocol", f)
	}
	if want := cfg.Orders + int(float64(cfg.Orders)*cfg.Duplicates+0.5); rep.Orders != want || rep.Unique != cfg.Orders {
		t.Errorf("the checker read %d orders, %d unique; want %d and %d", rep.Orders, rep.Unique, want, cfg.Orders)
	}
	if rep.Poison != cfg.Poison {
		t.Errorf("the checker found %d poison records, want the %d injected", rep.Poison, cfg.Poison)
	}
}

// testWriter writes the run's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b[:len(b)-min(1, len(b))]))
	return len(b), nil
}
