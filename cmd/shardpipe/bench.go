package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/bench"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
)

const (
	fBenchTopic      = "bench-topic"
	fRecords         = "records"
	fRounds          = "rounds"
	fNaiveRecords    = "naive-records"
	fNaiveBudget     = "naive-budget"
	fLatencyRate     = "latency-rate"
	fLatencyDuration = "latency-duration"
	fLatencyCommit   = "latency-commit-interval"
	fProfileDir      = "profile-dir"
	fJSONFile        = "json-file"
	fModes           = "modes"
	fGuardRecords    = "guard-records"
	fGuardDelay      = "guard-delay"
	fGuardInFlight   = "guard-in-flight"
	fGuardParts      = "guard-partitions"
	fSQLURL          = "sql-url"
	fSQLPasswordFile = "sql-password-file"
	fSQLRecords      = "sql-records"
)

func benchCommand() *cli.Command {
	return cliflags.Command(env, &cli.Command{
		Name:  "bench",
		Usage: "measure shardpipe against the consume and sink ceilings on your Kafka and Redis",
		UsageText: `shardpipe bench --brokers kafka:9092 --redis redis:6379 [--records N] [--json]

Examples:
   shardpipe bench --brokers 127.0.0.1:9092 --redis 127.0.0.1:6379
   shardpipe bench --records 100000 --rounds 1 --json > bench.json`,
		Description: "Pre-fills a topic with --records orders of about 200 bytes (reused when it already holds\n" +
			"them) and measures, in one run, each mode --rounds times in a child process: (a) franz-go\n" +
			"consuming it with no sink, (b) pipelined SET NX EX of the same keys into Redis (values the\n" +
			"size of (d)'s claims), (k) the ledger's record-mode batch script (as (d) sends it) and (j)\n" +
			"its claim+totals script (as (e) sends it) sent into Redis the same way, (c) a naive\n" +
			"consumer with one SETNX and one synchronous commit per record (on a bounded prefix), (d)\n" +
			"shardpipe's defaults, (e) with the totals effect, (f) replaying keys already claimed; then\n" +
			"(g-i) guard mode with the HTTP effect against a receiver bench serves, on a topic of\n" +
			"--guard-partitions: --max-in-flight 1 and --guard-in-flight with a --guard-delay receiver,\n" +
			"and --guard-in-flight with a 0ms one; with --sql-url, (l) the first --sql-records orders\n" +
			"INSERTed into a table of PostgreSQL batched (12 streams, 500 per transaction, no Kafka, no\n" +
			"inbox, no Redis), (m) the same with the inbox's INSERT per order in those transactions and\n" +
			"(n) shardpipe with --effect sql as run uses it by default (guard mode, --max-in-flight 16,\n" +
			"one transaction per record) inserting them, and (o) the same with --max-in-flight 0 (one\n" +
			"transaction per batch); then\n" +
			"the latency from record timestamp to effect landed at --latency-rate. It prints records/s,\n" +
			"CPU seconds per million records, peak RSS and allocations per record (median [min-max]),\n" +
			"the ratios d/min(a,b), d/k, k/b, d/c, e/d, e/j, f/min(a,b), h/g, h/i, m/l, n/l, n/m, o/n, o/m and the\n" +
			"costs against their targets, and what each mode cost Redis's main thread (INFO cpu around each\n" +
			"round: CPU seconds per million records, the share of the timed window it was busy, and (d)'s\n" +
			"per record over (k)'s). It writes only keys under 'shardpipe-bench:' (deleted after each\n" +
			"round, TTL 1h), topics named after --bench-topic and tables named shardpipe_bench_* (made\n" +
			"for each round of l, m, n and o, and dropped after it).",
	}, benchAction)
}

// benchConfig is bench's validated configuration.
type benchConfig struct {
	kafkaConn
	bench.Config
	json     bool
	jsonFile string
}

func (bc *benchConfig) Groups() []cliflags.Group {
	return []cliflags.Group{kafkaGroup(&bc.kafkaConn), cliflags.NewGroup(bc.load,
		&cli.StringFlag{Name: fRedis, Value: "127.0.0.1:6379", Usage: "Redis, host:port or a redis:// URL"},
		&cli.StringFlag{Name: fBenchTopic, Usage: "pre-filled topic to use (default shardpipe-bench-RECORDS, recreated when it holds another count)"},
		&cli.IntFlag{Name: fRecords, Value: 1_000_000, Usage: "records in the topic, and per round of each mode"},
		&cli.IntFlag{Name: fPartitions, Value: 12, Usage: "partitions of a topic the bench creates"},
		&cli.StringFlag{Name: fModes, Usage: "measure only these, comma-separated: a-o or consume, sink, naive, shardpipe, totals, replay, guard (g-i), scripted (j), ledger (k), sql (l-o), and latency (default all)"},
		&cli.IntFlag{Name: fGuardRecords, Value: 20_000, Usage: "guard modes h and i: records per round (g: a twentieth; 0: skip g-i)"},
		&cli.DurationFlag{Name: fGuardDelay, Value: 20 * time.Millisecond, Usage: "guard modes g and h: the receiver's delay per call"},
		&cli.IntFlag{Name: fGuardInFlight, Value: 64, Usage: "guard modes h and i: --max-in-flight"},
		&cli.IntFlag{Name: fGuardParts, Value: 1, Usage: "guard modes: partitions of their topic (the issue's ratio is per partition)"},
		&cli.StringFlag{Name: fSQLURL, Usage: "modes l-o: the PostgreSQL database, postgres://USER@HOST:PORT/DB[?sslmode=...], without a password (give it with --sql-password-file, " + settings.EnvSQLPassword + " or PGPASSWORD), as run's (empty: skip l-o)"},
		&cli.StringFlag{Name: fSQLPasswordFile, Usage: "modes l-o: a file holding the database user's password; or set " + settings.EnvSQLPassword + " (or PGPASSWORD)"},
		&cli.IntFlag{Name: fSQLRecords, Value: 20_000, Usage: "modes l-o: the first orders of the topic each round inserts"},
		&cli.IntFlag{Name: fCommitEvery, Usage: "modes d, e, f: commit every N records instead of the pipeline's default (a what-if; 0: the default)"},
		&cli.IntFlag{Name: fRounds, Value: 3, Usage: "rounds per mode; figures are the median with min and max"},
		&cli.IntFlag{Name: fNaiveRecords, Value: 20_000, Usage: "naive baseline: records per round at most"},
		&cli.DurationFlag{Name: fNaiveBudget, Value: 5 * time.Second, Usage: "naive baseline: time per round at most"},
		&cli.IntFlag{Name: fLatencyRate, Value: 20_000, Usage: "latency: offered records per second (0: skip)"},
		&cli.DurationFlag{Name: fLatencyDuration, Value: 5 * time.Second, Usage: "latency: how long each round offers load"},
		&cli.DurationFlag{Name: fLatencyCommit, Value: 100 * time.Millisecond, Usage: "latency: the pipeline's --commit-interval"},
		&cli.BoolFlag{Name: fJSON, Usage: "print JSON instead of a table"},
		&cli.StringFlag{Name: fJSONFile, Usage: "also write the JSON report to this file, and a chart of the modes against their ceilings beside it (SVG, .svg in place of .json)"},
		&cli.StringFlag{Name: fProfileDir, Usage: "write CPU and allocation profiles of each mode's first round here"})}
}

func (bc *benchConfig) load(c *cli.Command, bad *cliflags.Problems) {
	n := func(name string, min, max int) int { return settings.IntIn(c, bad, name, flagcheck.In(min, max, "")) }
	d := func(name string, min, max time.Duration) time.Duration {
		return settings.DurationIn(c, bad, name, flagcheck.In(min, max, ""))
	}
	bc.Config = bench.Config{
		Brokers: bc.brokers, Kafka: bc.sec, Redis: strings.TrimSpace(c.String(fRedis)),
		Topic: c.String(fBenchTopic), Records: n(fRecords, 1000, 100_000_000), Partitions: int32(n(fPartitions, 1, 1000)),
		Rounds: n(fRounds, 1, 100), NaiveRecords: n(fNaiveRecords, 1, 10_000_000), NaiveBudget: d(fNaiveBudget, time.Millisecond, time.Hour),
		LatencyRate: n(fLatencyRate, 0, 10_000_000), LatencyDuration: d(fLatencyDuration, 0, time.Hour),
		LatencyCommit: d(fLatencyCommit, time.Millisecond, time.Hour), ProfileDir: c.String(fProfileDir),
		CommitEvery:  n(fCommitEvery, 0, 1_000_000),
		GuardRecords: n(fGuardRecords, 0, 10_000_000), GuardDelay: d(fGuardDelay, 0, time.Second),
		GuardInFlight: n(fGuardInFlight, 1, 4096), GuardPartitions: int32(n(fGuardParts, 1, 1000)),
		SQLURL: strings.TrimSpace(c.String(fSQLURL)), SQLPasswordFile: c.String(fSQLPasswordFile),
		SQLRecords: n(fSQLRecords, 1, 10_000_000),
		Args:       []string{"bench-worker", "--spec"}, Stderr: c.Root().ErrWriter,
		Log: newLogger(c.Root().ErrWriter, logConfig{format: "text"}),
	}
	bc.json, bc.jsonFile = c.Bool(fJSON), c.String(fJSONFile)
	if bc.Topic == "" {
		bc.Topic, bc.Recreate = fmt.Sprintf("shardpipe-bench-%d", bc.Records), true
	} else if msg := flagcheck.Topic(bc.Topic); msg != "" {
		bad.Addf("%s %q: %s", flagRef(fBenchTopic), bc.Topic, msg)
	}
	if ms, err := bench.ParseModes(c.String(fModes)); err != nil {
		bad.Addf("%s: %v", flagRef(fModes), err)
	} else {
		bc.Modes = ms
	}
	if bc.SQLURL != "" {
		settings.LoadSQLDB(bc.SQLURL, bc.SQLPasswordFile, bad) // refused as run refuses it
	} else if slices.ContainsFunc(bc.Modes, bench.IsSQL) {
		bad.Addf("%s names l, m or n: they need %s", flagRef(fModes), flagRef(fSQLURL))
	}
	if _, err := flagcheck.ParseRedis(bc.Redis, false); err != nil {
		redisProblems(bad, bc.Redis, err)
	}
	if err := bc.Validate(); err != nil && len(*bad) == 0 {
		bad.Addf("%v", err)
	}
}

func benchAction(ctx context.Context, c *cli.Command, bc *benchConfig) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := benchReachable(ctx, bc.kafkaConn, bc.Config, newLogger(c.Root().ErrWriter, logConfig{format: "text"})); err != nil {
		return err
	}
	rep, err := bench.Run(ctx, bc.Config)
	if err != nil {
		return failure(err)
	}
	if err := bench.Output(rep, c.Root().Writer, bc.json, bc.jsonFile); err != nil {
		return failure(err)
	}
	return nil
}
