package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// envSample is a value of f's type other than its default, as its
// environment variable would carry it, and the value the flag then holds.
func envSample(f cli.Flag) (env string, want string) {
	switch f.(type) {
	case *cli.StringSliceFlag:
		return "env-a,env-b", "[env-a env-b]"
	case *cli.IntFlag, *cli.Uint64Flag:
		return "7", "7"
	case *cli.FloatFlag:
		return "0.5", "0.5"
	case *cli.BoolFlag:
		return "true", "true"
	case *cli.DurationFlag:
		return "7s", "7s"
	}
	return "env-value", "env-value"
}

// TestEveryFlagIsAnEnvironmentVariable: for every command, bench and demo
// included, every flag names SHARDPIPE_ and its name as its variable, and
// the command reads the flag's value from it.
func TestEveryFlagIsAnEnvironmentVariable(t *testing.T) {
	for _, cmd := range newApp(nil, nil).Commands {
		if len(cmd.Flags) == 0 {
			continue
		}
		t.Run(cmd.Name, func(t *testing.T) {
			want := map[string]string{}
			for _, f := range cmd.Flags {
				name := f.Names()[0]
				if name == "help" {
					continue
				}
				env, value := envSample(f)
				if vars := f.(cli.DocGenerationFlag).GetEnvVars(); !slices.Equal(vars, []string{envName(name)}) {
					t.Errorf("--%s: variables %q, want [%s]", name, vars, envName(name))
				}
				t.Setenv(envName(name), env)
				want[name] = value
			}
			app := newApp(nil, nil)
			var got *cli.Command
			app.Command(cmd.Name).Action = func(_ context.Context, c *cli.Command) error { got = c; return nil }
			if err := app.Run(context.Background(), []string{"shardpipe", cmd.Name}); err != nil {
				t.Fatalf("%s with every variable set: %v", cmd.Name, err)
			}
			for name, value := range want {
				if !got.IsSet(name) || fmt.Sprint(got.Value(name)) != value {
					t.Errorf("--%s: %v (set %v) with %s set, want %s", name, got.Value(name), got.IsSet(name), envName(name), value)
				}
			}
		})
	}
}

// TestOneNameOneMeaning: a flag name that several commands take is the
// same kind of value in each, so that one exported variable cannot mean a
// count to one command and a list to another, or a file to one command and
// a start to another (SHARDPIPE_FROM was produce's file and replay's
// start). A kind is the flag's type and, for a string, whether it names a
// file (TakesFile, which every flag whose usage says FILE sets). The
// exceptions say why they mean the same.
func TestOneNameOneMeaning(t *testing.T) {
	same := map[string]string{
		"topic": "the topic to work on; run and status take several",
		"rate":  "records per second; replay takes fractions",
	}
	kinds := map[string]map[string][]string{} // name -> kind -> commands
	for _, cmd := range newApp(nil, nil).Commands {
		for _, f := range cmd.Flags {
			name, kind := f.Names()[0], fmt.Sprintf("%T", f)
			if sf, ok := f.(*cli.StringFlag); ok {
				if strings.Contains(sf.Usage, "FILE") && !sf.TakesFile {
					t.Errorf("%s --%s: its usage names a FILE but it does not set TakesFile", cmd.Name, name)
				}
				if sf.TakesFile {
					kind += " (a file)"
				}
			}
			if kinds[name] == nil {
				kinds[name] = map[string][]string{}
			}
			kinds[name][kind] = append(kinds[name][kind], cmd.Name)
		}
	}
	for name, ks := range kinds {
		if len(ks) > 1 && same[name] == "" {
			t.Errorf("--%s (%s) is read as different kinds of value: %v", name, envName(name), ks)
		}
	}
}

// TestPartitionsOneMeaning: SHARDPIPE_PARTITIONS is produce's partition
// count; replay and reset-offsets, which once read it as a list of
// partitions, refuse it (exit 2, before connecting) rather than cover only
// the partition it names.
func TestPartitionsOneMeaning(t *testing.T) {
	for _, args := range [][]string{
		{"replay", "--topic", "orders", "--id", "r1", "--from", "0", "--dry-run"},
		{"reset-offsets", "--topic", "orders", "--to", "earliest", "--dry-run"},
	} {
		t.Run(args[0], func(t *testing.T) {
			code, _, stderr := call(t, map[string]string{"SHARDPIPE_PARTITIONS": "2", "SHARDPIPE_BROKERS": "127.0.0.1:1",
				"SHARDPIPE_REDIS": "127.0.0.1:1"}, args...)
			lines := problemLines(stderr)
			if code != exitUsage || len(lines) != 1 || !strings.Contains(lines[0], `SHARDPIPE_PARTITIONS="2" is set`) ||
				!strings.Contains(lines[0], "--partition-ids") {
				t.Fatalf("exit %d, lines %q; want exit 2 and one line refusing SHARDPIPE_PARTITIONS", code, lines)
			}
		})
	}
	code, _, stderr := call(t, map[string]string{"SHARDPIPE_PARTITIONS": "x"}, "produce", "--brokers", "127.0.0.1:1", "--topic", "o")
	if code != exitUsage || !strings.Contains(stderr, `environment variable "SHARDPIPE_PARTITIONS" for flag partitions`) {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
}

// TestEveryProblemReported: every bad environment value, every bad flag
// and every invalid setting is one line, all of them reported at once.
func TestEveryProblemReported(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string // one line each
	}{
		{"two variables and a bad setting", map[string]string{"SHARDPIPE_TTL": "soon", "SHARDPIPE_COMMIT_EVERY": "often"},
			[]string{"run", "--topic", "o", "--effect", "bogus"},
			[]string{`"SHARDPIPE_TTL"`, `"SHARDPIPE_COMMIT_EVERY"`, `--effect (SHARDPIPE_EFFECT) "bogus"`}},
		{"bad flag values and an unknown flag", nil,
			[]string{"run", "--topic", "o", "--ttl", "forever", "--commit-every=ten", "--brokerz", "x:1"},
			[]string{`invalid value "forever" for flag -ttl`, `invalid value "ten" for flag -commit-every`, "flag provided but not defined: -brokerz"}},
		{"flags and variables", map[string]string{"SHARDPIPE_MAX_BATCH": "many"},
			[]string{"replay", "--topic", "o", "--id", "r", "--from", "0", "--rate", "fast"},
			[]string{`"SHARDPIPE_MAX_BATCH"`, `invalid value "fast" for flag -rate`}},
		{"an argument before bad flags", nil, []string{"run", "--topic", "o", "extra", "--ttl", "forever", "--max-batch", "-1"},
			[]string{`invalid value "forever" for flag -ttl`, "--max-batch (SHARDPIPE_MAX_BATCH) -1", `run takes no arguments, got ["extra"]`}},
		{"bench", map[string]string{"SHARDPIPE_RECORDS": "abc", "SHARDPIPE_ROUNDS": "x"}, []string{"bench"},
			[]string{`"SHARDPIPE_RECORDS"`, `"SHARDPIPE_ROUNDS"`}},
		{"demo", map[string]string{"SHARDPIPE_TIMEOUT": "long"}, []string{"demo", "--rebalance-orders", "1"},
			[]string{`"SHARDPIPE_TIMEOUT"`, "--rebalance-orders (SHARDPIPE_REBALANCE_ORDERS) 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"SHARDPIPE_BROKERS": "127.0.0.1:1", "SHARDPIPE_REDIS": "127.0.0.1:1"}
			for k, v := range tt.env {
				env[k] = v
			}
			code, _, stderr := call(t, env, tt.args...)
			lines := problemLines(stderr)
			if code != exitUsage || len(lines) != len(tt.want) {
				t.Fatalf("exit %d, lines %q; want exit 2 and %d lines", code, lines, len(tt.want))
			}
			for _, w := range tt.want {
				n := 0
				for _, l := range lines {
					if strings.Contains(l, w) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%d lines contain %q, want 1: %q", n, w, lines)
				}
			}
		})
	}
}

// TestTypos: a mistyped command is named as such, and a mistyped command
// or flag gets a "did you mean".
func TestTypos(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"rnu", "--topic", "x"}, []string{`unknown command "rnu"`, "did you mean run?"}},
		{[]string{"reset-offset", "--to", "earliest"}, []string{`unknown command "reset-offset"`, "did you mean reset-offsets?"}},
		{[]string{"zzzz"}, []string{`unknown command "zzzz"`, "want run, produce"}},
		{[]string{"run", "--topic", "o", "--brokerz", "x:1"}, []string{"flag provided but not defined: -brokerz", "did you mean --brokers?"}},
		{[]string{"replay", "--topic", "o", "--id", "r", "--from", "0", "--partitions", "1"}, []string{"flag provided but not defined: -partitions", "did you mean --partition-ids?"}},
		{[]string{"status", "--jsno"}, []string{"did you mean --json?"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := call(t, nil, tt.args...)
			lines := problemLines(stderr)
			if code != exitUsage || len(lines) != 1 {
				t.Fatalf("exit %d, lines %q; want exit 2 and one line", code, lines)
			}
			for _, w := range tt.want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("line %q lacks %q", lines[0], w)
				}
			}
		})
	}
}

// TestConnectTimeoutHelp: --connect-timeout names Redis only on the
// commands that connect to it at start.
func TestConnectTimeoutHelp(t *testing.T) {
	for cmd, redis := range map[string]bool{"run": true, "replay": true, "produce": false, "status": false, "reset-offsets": false} {
		_, out, _ := call(t, nil, cmd, "--help")
		i := strings.Index(out, "--connect-timeout duration")
		if i < 0 {
			t.Fatalf("%s --help lacks --connect-timeout", cmd)
		}
		line, _, _ := strings.Cut(out[i:], "\n")
		if strings.Contains(line, "Redis") != redis {
			t.Errorf("%s --help: %q; want Redis named: %v", cmd, line, redis)
		}
	}
}
