package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1 // failed while running
	exitUsage       = 2 // invalid flags or environment
	exitUnavailable = 3 // a server is unreachable, a topic or group does not exist
)

// exitError carries an exit code and one line per problem.
type exitError struct {
	code  int
	lines []string
}

func (e *exitError) Error() string { return strings.Join(e.lines, "; ") }

func usageErr(lines ...string) error { return &exitError{code: exitUsage, lines: lines} }

func unavailableErr(lines ...string) error { return &exitError{code: exitUnavailable, lines: lines} }

func failure(err error) error { return &exitError{code: exitFailure, lines: []string{err.Error()}} }

// execute runs the command line args and returns the exit code. Problems go
// to stderr, one line each, prefixed "shardpipe: ", control bytes escaped.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newApp(stdout, stderr)
	args, err := cliflags.CheckArgs(root, args)
	if err == nil {
		cliflags.CheckEnv(root, args, env, os.Environ(), otherVariables()...)
		err = root.Run(ctx, args)
	}
	if err == nil {
		return exitOK
	}
	var ee *exitError
	var ue *cliflags.UsageError
	switch {
	case errors.As(err, &ue):
		ee = &exitError{code: exitUsage, lines: ue.Lines}
	case !errors.As(err, &ee):
		// urfave/cli's own parse errors: unknown flags, unparsable values
		// from the command line or the environment.
		ee = &exitError{code: exitUsage, lines: []string{err.Error()}}
	}
	for _, l := range ee.lines {
		fmt.Fprintf(stderr, "shardpipe: %s\n", escapeControl(l))
	}
	if ee.code == exitUsage {
		fmt.Fprintln(stderr, "shardpipe: see 'shardpipe --help' or 'shardpipe COMMAND --help'")
	}
	return ee.code
}

// newApp builds the command tree.
func newApp(stdout, stderr io.Writer) *cli.Command {
	onUsage := func(_ context.Context, _ *cli.Command, err error, _ bool) error { return usageErr(err.Error()) }
	cmds := []*cli.Command{runCommand(), produceCommand(), statusCommand(), replayCommand(), resetOffsetsCommand(), benchCommand(), benchWorkerCommand(),
		probeCommand(),
		demoCommand(), versionCommand()}
	for _, c := range cmds {
		c.OnUsageError = onUsage
	}
	return &cli.Command{
		Name:  "shardpipe",
		Usage: "consume Kafka topics with effects that land exactly once (Redis ledger by business key)",
		Description: "Every flag can also be set from an environment variable: SHARDPIPE_ and the flag's name\n" +
			"in upper case with '-' as '_' (--commit-every: SHARDPIPE_COMMIT_EVERY); a flag on the\n" +
			"command line wins. Exit codes: 0 done, 1 failed while running, 2 invalid flags or\n" +
			"environment, 3 a server is unreachable or a topic or group does not exist.\n\n" +
			"Try it with nothing installed:  shardpipe demo",
		Commands:       cmds,
		Writer:         stdout,
		ErrWriter:      stderr,
		HideVersion:    true,
		Flags:          []cli.Flag{&cli.BoolFlag{Name: fVersion, Local: true, Usage: "print the version (as shardpipe version)"}},
		OnUsageError:   onUsage,
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Action: func(_ context.Context, c *cli.Command) error {
			if c.Bool(fVersion) {
				return printVersion(c)
			}
			if c.Args().Len() > 0 {
				return usageErr(fmt.Sprintf("unknown command %q: want run, produce, status, replay, reset-offsets, bench, demo or version", c.Args().First()))
			}
			return cli.ShowRootCommandHelp(c)
		},
	}
}

// env names the flags' variables: SHARDPIPE_ and the flag's name
// (settings.Env, which the groups of cmd/shardpipe/internal/settings name).
const env = settings.Env

// envName is the environment variable for flag name.
func envName(flag string) string { return env.Name(flag) }

// flagRef names a flag and its variable for messages: "--ttl (SHARDPIPE_TTL)".
func flagRef(flag string) string { return env.Ref(flag) }

// untilSignal returns ctx ended by the first SIGINT or SIGTERM; a second
// one kills at once (the default handling is restored when ctx ends).
func untilSignal(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
