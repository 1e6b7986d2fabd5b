// Command chaos is `make chaos`: it builds shardpipe and the chaos receiver,
// starts a Kafka broker and a Redis of its own with scripts/services.sh (it
// kills and restarts them, so never point it at servers anything else
// uses), runs three `shardpipe run` processes under a seeded fault schedule
// while `shardpipe produce` writes orders, first in record mode (--effect
// totals; the second of the three processes with --max-in-flight 8, the
// others in batches, so both schedules share the group), then in guard mode
// (--effect http --max-in-flight 16 against the receiver, with a Redis
// outage past the sink's retry budget while effects are in flight), then
// with the SQL effect (--effect sql --max-in-flight 16 into a table without
// a unique constraint on a PostgreSQL of its own, restarted at once while
// effects run; the checker wants one row per order), and prints the independent checker's verdict as one line of figures per
// pass. It exits 1 on any violation, 2 when the run could not be carried
// out.
//
//	go run ./internal/harness/cmd/chaos [-short] [-cluster] [-seed N] [-poison N] [-orders N] [-passes record,guard,sql]
//
// With -cluster (`make chaos CLUSTER=1`) the servers are a Redis Cluster of
// three masters with one replica each and a Kafka of three brokers
// (replication factor 3, min.insync.replicas=2): the Redis faults are master
// failovers (the guard pass's outage takes a whole shard down), the broker
// faults SIGKILLs of the broker leading the most partitions, and `run` gets
// --redis-replicas 1.
//
// The servers get ports that are free at start (or -kafka-port,
// -controller-port, -redis-port) and their own state directory under the
// work directory, so the run never touches the servers of `make test`; the
// SHARDPIPE_*_PORT variables of scripts/services.sh are not read.
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
	"strings"
	"syscall"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/chaos"
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
	workDir := flag.String("work-dir", "", "where the binary, the servers' state and the process logs go (default: a new temporary directory)")
	kafkaPort := flag.Int("kafka-port", 0, "broker port (0: one free at start)")
	controllerPort := flag.Int("controller-port", 0, "KRaft controller port (0: one free at start)")
	redisPort := flag.Int("redis-port", 0, "Redis port (0: one free at start)")
	passes := flag.String("passes", "", "the passes to run, comma-separated: record (--effect totals), guard (--effect http), sql (--effect sql) (default: all three; record,guard with -cluster)")
	cluster := flag.Bool("cluster", false, "run on a Redis Cluster (three masters, one replica each) and a three-broker Kafka: master failovers and broker kills")
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
	if *passes == "" {
		*passes = "record,guard,sql"
		if *cluster {
			*passes = "record,guard"
		}
	}
	record, guard, sql := false, false, false
	for _, p := range strings.Split(*passes, ",") {
		switch strings.TrimSpace(p) {
		case "record":
			record = true
		case "guard":
			guard = true
		case "sql":
			sql = true
		default:
			fmt.Fprintf(os.Stderr, "chaos: -passes %q: want a list of record, guard and sql\n", *passes)
			return 2
		}
	}
	cfg.RecordPass = record
	if !guard {
		cfg.Guard = chaos.GuardPass{}
	}
	if !sql {
		cfg.SQL = chaos.SQLPass{}
	}
	cfg.Out = os.Stdout
	root, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	if cfg.WorkDir = *workDir; cfg.WorkDir == "" {
		if cfg.WorkDir, err = os.MkdirTemp("", "shardpipe-chaos-"); err != nil {
			return fail(err)
		}
	}
	if cfg.WorkDir, err = filepath.Abs(cfg.WorkDir); err != nil {
		return fail(err)
	}
	cfg.Services = chaos.Services{Root: root, Dir: filepath.Join(cfg.WorkDir, "services"),
		KafkaPort: *kafkaPort, ControllerPort: *controllerPort, RedisPort: *redisPort}
	if err := cfg.Services.PickPorts(); err != nil {
		return fail(err)
	}
	cfg.Bin = filepath.Join(cfg.WorkDir, "shardpipe")
	cfg.ReceiverBin = filepath.Join(cfg.WorkDir, "receiver")
	if *cluster {
		cfg.Cluster = &chaos.ClusterServices{Root: root, Dir: filepath.Join(cfg.WorkDir, "clusters")}
		fmt.Printf("chaos: building shardpipe and the receiver; logs in %s; a redis cluster and a three-broker kafka on free ports\n", cfg.WorkDir)
	} else {
		fmt.Printf("chaos: building shardpipe and the receiver; logs in %s; kafka on %s, redis on %s\n", cfg.WorkDir, cfg.Services.Brokers(), cfg.Services.Redis())
	}
	for bin, pkg := range map[string]string{cfg.Bin: "./cmd/shardpipe", cfg.ReceiverBin: "./internal/harness/cmd/receiver"} {
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fail(fmt.Errorf("go build %s: %w", pkg, err))
		}
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
