// Command chaos is `make chaos`: it builds shardpipe, starts a Kafka broker
// and a Redis of its own with scripts/services.sh (it kills and restarts
// them, so never point it at servers anything else uses), runs three
// `shardpipe run` processes under a seeded fault schedule while `shardpipe
// produce` writes orders, and prints the independent checker's verdict as
// one line of figures. It exits 1 on any violation, 2 when the run could
// not be carried out.
//
//	go run ./internal/cmd/chaos [-short] [-seed N] [-poison N] [-orders N]
//
// Ports and the services directory come from SHARDPIPE_KAFKA_PORT,
// SHARDPIPE_KAFKA_CONTROLLER_PORT, SHARDPIPE_REDIS_PORT and
// SHARDPIPE_SERVICES_DIR (default .cache/chaos-services), as for
// scripts/services.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/shardpipe/shardpipe/internal/chaos"
)

func main() {
	os.Exit(run())
}

func run() int {
	short := flag.Bool("short", false, "the short variant (10,000 orders, one fault of each kind per protocol)")
	seed := flag.Uint64("seed", 0, "seed of the schedule, the orders and the poison records (0: random, printed)")
	poison := flag.Int("poison", -1, "poison records to inject; they need `run --on-poison dlq` (-1: the variant's default; 0: none)")
	orders := flag.Int("orders", 0, "unique orders (0: the variant's default)")
	kills := flag.Int("kills", -1, "consumer kills per protocol phase (-1: the variant's default)")
	produce := flag.Duration("produce", 0, "how long production lasts (0: the variant's default)")
	workDir := flag.String("work-dir", "", "where the binary and the process logs go (default: a new temporary directory)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "chaos: no arguments are taken, got %q\n", flag.Args())
		return 2
	}
	cfg := chaos.Full()
	if *short {
		cfg = chaos.Short()
	}
	cfg.Seed = *seed
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64N(1<<31) + 1
	}
	if *poison >= 0 {
		cfg.Poison = *poison
	}
	if *orders > 0 {
		cfg.Orders = *orders
	}
	if *kills >= 0 {
		cfg.Kills = *kills
	}
	if *produce > 0 {
		cfg.Produce = *produce
	}
	cfg.Out = os.Stdout
	root, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	cfg.Services = chaos.Services{Root: root, Dir: envOr("SHARDPIPE_SERVICES_DIR", filepath.Join(root, ".cache", "chaos-services")),
		KafkaPort: envInt("SHARDPIPE_KAFKA_PORT", 39192), ControllerPort: envInt("SHARDPIPE_KAFKA_CONTROLLER_PORT", 39193),
		RedisPort: envInt("SHARDPIPE_REDIS_PORT", 36479)}
	if cfg.WorkDir = *workDir; cfg.WorkDir == "" {
		if cfg.WorkDir, err = os.MkdirTemp("", "shardpipe-chaos-"); err != nil {
			return fail(err)
		}
	}
	cfg.Bin = filepath.Join(cfg.WorkDir, "shardpipe")
	fmt.Printf("chaos: building shardpipe; logs in %s\n", cfg.WorkDir)
	build := exec.Command("go", "build", "-o", cfg.Bin, "./cmd/shardpipe")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fail(fmt.Errorf("go build: %w", err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	fmt.Println(rep)
	fmt.Printf("chaos: seed %d, %v\n", cfg.Seed, time.Since(start).Round(time.Second))
	if !rep.OK() {
		return 1
	}
	return 0
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "chaos:", err)
	return 2
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n <= 0 {
		return def
	}
	return n
}
