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
	"github.com/shardpipe/shardpipe/internal/harness/chaos"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestChaosShort is the short variant of `make chaos`: three `shardpipe
// run` processes on a Kafka broker and a Redis of the test's own (started
// with scripts/services.sh on free ports, since the run kills and restarts
// them). Record mode: 10,000 orders with 10% re-sends, and per group
// protocol one consumer SIGKILL, one zombie pause past the session timeout,
// one Redis SIGKILL and one broker restart. Guard mode (`run --effect
// http` against the chaos receiver): 2,000 orders, one kill, one zombie
// pause and one Redis outage past the sink's retry budget while effects
// are in flight. The independent checker must find every order in the
// ledger exactly once, the totals exact, every guard-mode effect run once
// (or again only after a kill in the documented window), every offset
// committed to the log end and none going backwards; and every fault must
// have had an effect one can observe: a killed consumer held landed,
// uncommitted records and something was replayed, a zombie woke fenced
// out, Redis came back a new process with its data, the watcher saw the
// broker go and return, the outage stranded effects.
//
// -short skips it unless SHARDPIPE_REQUIRE_INTEGRATION=1: required means
// required. SHARDPIPE_CHAOS_SEED repeats a run's schedule (the seed is
// logged).
func TestChaosShort(t *testing.T) {
	if testing.Short() && !integration.Required() {
		t.Skip("the chaos run takes about three minutes")
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
	cfg.Bin = itest.BuildShardpipe(t)
	cfg.ReceiverBin = buildReceiver(t)
	cfg.Out = testWriter{t}
	cfg.Services = chaos.Services{Root: root, Dir: filepath.Join(cfg.WorkDir, "services")}
	if err := cfg.Services.PickPorts(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	out, err := chaos.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Passes) != 2 {
		t.Fatalf("%d passes, want record and guard:\n%s", len(out.Passes), out)
	}
	for _, rep := range out.Passes {
		t.Log(rep.Line())
	}
	if !out.OK() {
		t.Fatalf("the chaos run broke a promise:\n%s", out)
	}
	rec, guard := out.Passes[0], out.Passes[1]
	f := rec.Faults
	if !slices.Equal(f.Protocols, []string{"classic", "consumer"}) || f.Kills != 2 || f.ZombiePauses != 2 ||
		f.RedisRestarts != 2 || f.BrokerRestarts != 2 {
		t.Errorf("record pass faults %+v, want both protocols and one of each fault per protocol", f)
	}
	// Orders beyond cfg.Orders are the tail the run feeds, without re-sends,
	// when faults outlast production.
	resends := int(float64(cfg.Orders)*cfg.Duplicates + 0.5)
	if rec.Unique < cfg.Orders || rec.Orders-rec.Unique != resends {
		t.Errorf("the checker read %d orders, %d unique; want at least %d unique and %d re-sends", rec.Orders, rec.Unique, cfg.Orders, resends)
	}
	if rec.Poison != cfg.Poison {
		t.Errorf("the checker found %d poison records, want the %d injected", rec.Poison, cfg.Poison)
	}
	g := guard.Faults
	if !slices.Equal(g.Protocols, cfg.Guard.Protocols) || g.Kills != cfg.Guard.Kills || g.ZombiePauses != 1 || g.RedisOutages != 1 {
		t.Errorf("guard pass faults %+v, want %v, %d kill, one zombie pause, one Redis outage", g, cfg.Guard.Protocols, cfg.Guard.Kills)
	}
	if guard.Unique < cfg.Guard.Orders || guard.Effects == nil || guard.Effects.PerKey[1] == 0 {
		t.Errorf("guard pass: %d unique orders, effects %+v; want at least %d orders whose effects ran", guard.Unique, guard.Effects, cfg.Guard.Orders)
	}
	// Each fault had an effect one can observe (the run counts a fault
	// again when it sees its effect), not just a signal sent.
	for _, rep := range out.Passes {
		f := rep.Faults
		if f.KillsHolding != f.Kills || f.ZombiesFenced != f.ZombiePauses || f.RedisRecovered != f.RedisRestarts ||
			f.BrokerOutagesSeen != f.BrokerRestarts {
			t.Errorf("faults without an observable effect: %+v", f)
		}
		if rep.Replayed() < 1 {
			t.Errorf("%d kills, but nothing was replayed: suppressed %d, re-sends %d", f.Kills, f.Suppressed, rep.Orders-rep.Unique)
		}
		if rep.Watch.Seen < 1 || f.Rebalances < f.Kills+f.ZombiePauses {
			t.Errorf("watcher read the offsets %d times, %d rebalances; want some, and at least one per kill and zombie", rep.Watch.Seen, f.Rebalances)
		}
	}
	if guard.Effects != nil && guard.Effects.Stranded < 1 {
		t.Errorf("the Redis outage stranded no effect: no call was answered while Redis was down")
	}
}

// buildReceiver builds the chaos receiver (internal/harness/cmd/receiver).
func buildReceiver(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "receiver")
	cmd := exec.Command("go", "build", "-o", bin, "./internal/harness/cmd/receiver")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./internal/harness/cmd/receiver: %v\n%s", err, out)
	}
	return bin
}

// testWriter writes the run's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b[:len(b)-min(1, len(b))]))
	return len(b), nil
}
