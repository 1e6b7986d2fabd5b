package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/bench"
)

const (
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
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure shardpipe against the consume and sink ceilings on your Kafka and Redis",
		UsageText: `shardpipe bench --brokers kafka:9092 --redis redis:6379 [--records N] [--json]

Examples:
   shardpipe bench --brokers 127.0.0.1:9092 --redis 127.0.0.1:6379
   shardpipe bench --records 100000 --rounds 1 --json > bench.json`,
		Description: "Pre-fills a topic with --records orders of about 200 bytes (reused when it already holds\n" +
			"them) and measures, in one run, each mode --rounds times in a child process: (a) franz-go\n" +
			"consuming it with no sink, (b) pipelined SET NX EX of the same keys into Redis, (c) a naive\n" +
			"consumer with one SETNX and one synchronous commit per record (on a bounded prefix), (d)\n" +
			"shardpipe's defaults, (e) with the totals effect, (f) replaying keys already claimed; then\n" +
			"the latency from record timestamp to effect landed at --latency-rate. It prints records/s,\n" +
			"CPU seconds per million records, peak RSS and allocations per record (median [min-max]),\n" +
			"and the ratios d/min(a,b), d/c, e/d, f/min(a,b). It writes only keys under\n" +
			"'shardpipe-bench:' (deleted after each round, TTL 1h) and topics named after --topic.",
		Flags: []cli.Flag{
			brokersFlag(),
			&cli.StringFlag{Name: fRedis, Value: "127.0.0.1:6379", Sources: fromEnv(fRedis),
				Usage: "Redis, host:port or a redis:// URL"},
			&cli.StringFlag{Name: fTopic, Usage: "pre-filled topic to use (default shardpipe-bench-RECORDS, recreated when it holds another count)"},
			&cli.IntFlag{Name: fRecords, Value: 1_000_000, Usage: "records in the topic, and per round of each mode"},
			&cli.IntFlag{Name: fPartitions, Value: 12, Usage: "partitions of a topic the bench creates"},
			&cli.StringFlag{Name: fModes, Usage: "measure only these, comma-separated: a-f or consume, sink, naive, shardpipe, totals, replay, and latency (default all)"},
			&cli.IntFlag{Name: fCommitEvery, Usage: "modes d, e, f: commit every N records instead of the pipeline's default (a what-if; 0: the default)"},
			&cli.IntFlag{Name: fRounds, Value: 3, Usage: "rounds per mode; figures are the median with min and max"},
			&cli.IntFlag{Name: fNaiveRecords, Value: 20_000, Usage: "naive baseline: records per round at most"},
			&cli.DurationFlag{Name: fNaiveBudget, Value: 5 * time.Second, Usage: "naive baseline: time per round at most"},
			&cli.IntFlag{Name: fLatencyRate, Value: 20_000, Usage: "latency: offered records per second (0: skip)"},
			&cli.DurationFlag{Name: fLatencyDuration, Value: 5 * time.Second, Usage: "latency: how long each round offers load"},
			&cli.DurationFlag{Name: fLatencyCommit, Value: 100 * time.Millisecond, Usage: "latency: the pipeline's --commit-interval"},
			&cli.BoolFlag{Name: fJSON, Usage: "print JSON instead of a table"},
			&cli.StringFlag{Name: fJSONFile, Usage: "also write the JSON report to this file"},
			&cli.StringFlag{Name: fProfileDir, Usage: "write CPU and allocation profiles of each mode's first round here"},
		},
		Action: benchAction,
	}
}

func benchAction(ctx context.Context, c *cli.Command) error {
	var bad problems
	cfg := bench.Config{
		Brokers: brokerList(&bad, c.StringSlice(fBrokers)), Redis: strings.TrimSpace(c.String(fRedis)),
		Topic: c.String(fTopic), Records: int(c.Int(fRecords)), Partitions: int32(c.Int(fPartitions)),
		Rounds: int(c.Int(fRounds)), NaiveRecords: int(c.Int(fNaiveRecords)), NaiveBudget: c.Duration(fNaiveBudget),
		LatencyRate: int(c.Int(fLatencyRate)), LatencyDuration: c.Duration(fLatencyDuration),
		LatencyCommit: c.Duration(fLatencyCommit), ProfileDir: c.String(fProfileDir), CommitEvery: int(c.Int(fCommitEvery)),
		Args: []string{"bench-worker", "--spec"}, Stderr: c.Root().ErrWriter,
		Log: newLogger(c.Root().ErrWriter, "text", 0),
	}
	if cfg.Topic == "" {
		cfg.Topic, cfg.Recreate = fmt.Sprintf("shardpipe-bench-%d", cfg.Records), true
	} else if msg := topicProblem(cfg.Topic); msg != "" {
		bad.addf("--%s %q: %s", fTopic, cfg.Topic, msg)
	}
	if ms, err := bench.ParseModes(c.String(fModes)); err != nil {
		bad.addf("--%s: %v", fModes, err)
	} else {
		cfg.Modes = ms
	}
	if _, err := parseRedis(cfg.Redis, false); err != nil {
		bad.addf("%s %q: %v", flagRef(fRedis), redactURL(cfg.Redis), err)
	}
	if err := cfg.Validate(); err != nil && len(bad) == 0 {
		bad.addf("%v", err)
	}
	if len(bad) > 0 {
		return usageErr(bad...)
	}
	exe, err := os.Executable()
	if err != nil {
		return failure(fmt.Errorf("bench: cannot find this binary to start workers: %w", err))
	}
	cfg.Exe = exe
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return failure(fmt.Errorf("bench: %w", err))
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := benchReachable(ctx, cfg); err != nil {
		return err
	}
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return failure(err)
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return failure(fmt.Errorf("bench: encode the report: %w", err))
	}
	js = append(js, '\n')
	if f := c.String(fJSONFile); f != "" {
		if err := os.WriteFile(f, js, 0o644); err != nil {
			return failure(fmt.Errorf("bench: %w", err))
		}
	}
	out := c.Root().Writer
	if c.Bool(fJSON) {
		_, err = out.Write(js)
	} else {
		err = bench.WriteTable(out, rep)
	}
	if err != nil {
		return failure(fmt.Errorf("bench: write the report: %w", err))
	}
	return nil
}
