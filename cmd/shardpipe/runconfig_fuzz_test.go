package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/sink"
)

// parseRun parses a run command line with run's flags and returns what
// loading run's flag groups makes of it, or the parse error; it never connects.
func parseRun(args []string) (*runConfig, error) {
	var (
		rc   *runConfig
		lerr error
	)
	cmd := &cli.Command{Name: "run", Flags: runCommand().Flags, Writer: io.Discard, ErrWriter: io.Discard,
		Action: func(_ context.Context, c *cli.Command) error {
			rc, lerr = cliflags.Load[runConfig](c)
			return nil
		}}
	if err := cmd.Run(context.Background(), append([]string{"run"}, args...)); err != nil {
		return rc, err
	}
	return rc, lerr
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FuzzRunConfig: any values of the flags that carry free text give either a
// usage error with one non-empty line per problem, or a configuration that
// holds run's invariants.
func FuzzRunConfig(f *testing.F) {
	f.Add("orders", "127.0.0.1:6379", "key", "168h", "dlq", "", "3", "100")
	f.Add("a,b", "redis://u:pw@h:1/2", "json:id", "1ms", "stop", "dead", "1", "0")
	f.Add("orders", "h1:1,h2:2", "header:x", "0s", "skip", "orders", "0", "-1")
	f.Add(" ", "rediss://h:1?dial_timeout=1s", "json:", "1us", "", "a b", "101", "x")
	f.Add("orders", "redis://:pw@s1:26379/0?master_name=mymaster&addr=s2:26379", "key", "24h", "dlq", "", "3", "100")
	f.Fuzz(func(t *testing.T, topic, redisSpec, keyFrom, ttl, onPoison, dlq, attempts, every string) {
		t.Setenv("SHARDPIPE_TOPIC", "") // flags only; the environment may hold anything
		args := []string{"--topic=" + topic, "--redis=" + redisSpec, "--key-from=" + keyFrom, "--ttl=" + ttl,
			"--on-poison=" + onPoison, "--dlq-topic=" + dlq, "--poison-attempts=" + attempts, "--commit-every=" + every}
		rc, err := parseRun(args)
		if err != nil {
			var ee *exitError
			if errors.As(err, &ee) {
				if ee.code != exitUsage || len(ee.lines) == 0 {
					t.Fatalf("%q: exit %d with %d lines, want a usage error", args, ee.code, len(ee.lines))
				}
				for _, l := range ee.lines {
					if strings.TrimSpace(l) == "" {
						t.Fatalf("%q: an empty problem line in %q", args, ee.lines)
					}
				}
			}
			return // else urfave/cli's own parse error, reported as usage by execute
		}
		switch {
		case len(rc.topics) == 0:
			t.Fatalf("%q: accepted with no topic", args)
		case rc.ttl < time.Millisecond:
			t.Fatalf("%q: accepted ttl %v", args, rc.ttl)
		case rc.p.Attempts < 1 || rc.p.Attempts > 100:
			t.Fatalf("%q: accepted %d poison attempts", args, rc.p.Attempts)
		case rc.commitConfig.c.Every < 0 || rc.maxBatch < 1:
			t.Fatalf("%q: accepted commit-every %d, max-batch %d", args, rc.commitConfig.c.Every, rc.maxBatch)
		case rc.p.DeadLetter != (onPoison == "dlq"):
			t.Fatalf("%q: dead letters %v", args, rc.p.DeadLetter)
		case btoi(rc.redis.Single != nil)+btoi(rc.redis.ClusterOpts != nil)+btoi(rc.redis.Failover != nil) != 1 ||
			rc.redis.Cluster != (rc.redis.ClusterOpts != nil):
			t.Fatalf("%q: redis target %+v is not exactly one of single, cluster and sentinel", args, rc.redis)
		case rc.redis.Failover != nil && !strings.Contains(redisSpec, "master_name="):
			t.Fatalf("%q: a sentinel target from a URL without master_name", args)
		}
		for _, tp := range append(append([]string{}, rc.topics...), rc.p.Topic) {
			if tp != "" && flagcheck.Topic(tp) != "" {
				t.Fatalf("%q: accepted illegal topic %q", args, tp)
			}
			if tp == rc.p.Topic && tp != "" && strings.Contains(","+strings.Join(rc.topics, ",")+",", ","+tp+",") {
				t.Fatalf("%q: dead-letter topic %q is also consumed", args, tp)
			}
		}
		if again, err := sink.ParseKeySource(rc.l.Spec.Keys.String()); err != nil || again != rc.l.Spec.Keys {
			t.Fatalf("%q: key source %v does not round-trip: %v", args, rc.l.Spec.Keys, err)
		}
	})
}

// FuzzRunArgs: any run command line (the fuzz input cut at newlines into
// arguments) goes through run's own checks (cliflags.CheckArgs, then every
// group, as execute does) to a usage error with one non-empty line per
// problem, or to a configuration whose numbers are in their ranges (docs/configuration.md's
// table) and whose single-node Redis client (its pools allocated) is built
// and closed; never to a panic. Nothing connects, the pipeline is not built.
func FuzzRunArgs(f *testing.F) {
	for _, s := range []string{
		"--topic\norders",
		"--topic=orders\n--redis\nredis://h:1?pool_size=-5",
		"--topic=o\n--redis=redis://h:1?pool_size=100000000&min_idle_conns=-1",
		"--topic=o\n--redis=redis://h:1?master_name=m&pool_size=-5",
		"--topic=o\n--redis=redis://h:1?pool_size=-5\n--redis-cluster",
		"--topic=o\n--dlq-window\n9223372036854775807",
		"--topic=o\n--dlq-window=100000",
		"--topic=o\n--dlq-max-share=NaN\n--rate=Inf",
		"--topic=o\n--max-batch=-1\n--commit-every=99999999999999999999",
		"--topic=o\n--ttl=2562047h47m16.854775807s\n--session-timeout=-1ns",
		"--topic=o\n--effect=http\n--http-url=http://h/x?token=t\n--http-timeout=29s",
		"--topic=o\n--redis=redis://u:p/w@h:1\nextra",
		"--brokerz=x\n--topic",
	} {
		f.Add(s)
	}
	f.Fuzz(checkRunArgs)
}

// checkRunArgs is FuzzRunArgs's check of one command line.
func checkRunArgs(t *testing.T, line string) {
	for _, kv := range os.Environ() { // flags only; the environment may hold anything
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "SHARDPIPE_") {
			t.Setenv(k, "")
		}
	}
	var rc *runConfig
	cmd := cliflags.Command(env, &cli.Command{Name: "run"}, func(_ context.Context, _ *cli.Command, c *runConfig) error {
		rc = c
		return nil
	})
	root := &cli.Command{Name: "shardpipe", Commands: []*cli.Command{cmd}, Writer: io.Discard, ErrWriter: io.Discard,
		ExitErrHandler: func(context.Context, *cli.Command, error) {}}
	args, err := cliflags.CheckArgs(root, append([]string{"shardpipe", "run"}, strings.Split(line, "\n")...))
	if err == nil {
		err = root.Run(context.Background(), args)
	}
	var ue *cliflags.UsageError
	switch {
	case errors.As(err, &ue):
		for _, l := range ue.Lines {
			if strings.TrimSpace(l) == "" {
				t.Fatalf("%q: an empty problem line in %q", line, ue.Lines)
			}
		}
		return
	case err != nil || rc == nil:
		return // urfave/cli's own parse error, reported as usage by execute
	}
	p := rc.p
	switch {
	case p.Window < 1 || p.Window > 100_000 || !(p.MaxShare >= 0 && p.MaxShare <= 1) || p.MaxRun < 0:
		t.Fatalf("%q: accepted dead-letter bounds %d, %v, %d", line, p.Window, p.MaxShare, p.MaxRun)
	case rc.maxBatch < 1 || rc.maxBatch > 100_000 || rc.ttl < time.Millisecond:
		t.Fatalf("%q: accepted max-batch %d, ttl %v", line, rc.maxBatch, rc.ttl)
	}
	if o := rc.redis.Single; o != nil {
		quiet := *o
		quiet.MinIdleConns = 0 // no dial in the background
		target := flagcheck.RedisTarget{Single: &quiet}
		if err := target.Client().Close(); err != nil {
			t.Fatalf("%q: close: %v", line, err)
		}
		if o.PoolSize < 0 || o.PoolSize > 10_000 || o.MinIdleConns < 0 || o.MaxIdleConns < 0 || o.MaxActiveConns < 0 {
			t.Fatalf("%q: accepted Redis pool size %d, idle %d to %d, active %d", line, o.PoolSize, o.MinIdleConns, o.MaxIdleConns, o.MaxActiveConns)
		}
	}
}
