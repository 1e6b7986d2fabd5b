package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
)

// pinRelative writes, after a dry run whose --from or --to is a duration
// ago, the times they resolved to and the command line of the real run
// over the same window: the time in place of each duration, without
// --dry-run. A run resolves a duration again when it starts (a dry run
// stores no plan), so the same flags minutes later read another window.
// Nothing is written when no bound is a duration.
func pinRelative(w io.Writer, c *cli.Command, rc *replayConfig) error {
	given := map[string]string{settings.FlagFrom: c.String(settings.FlagFrom), settings.FlagTo: c.String(settings.FlagTo)}
	resolved := map[string]string{settings.FlagFrom: rc.from.String(), settings.FlagTo: rc.to.String()}
	pins := map[string]string{}
	var said []string
	for _, name := range []string{settings.FlagFrom, settings.FlagTo} {
		if flagcheck.Relative(given[name]) {
			pins[name] = resolved[name]
			said = append(said, fmt.Sprintf("--%s %s is %s", name, strings.TrimSpace(given[name]), resolved[name]))
		}
	}
	if len(pins) == 0 {
		return nil
	}
	line := commandLine(cliflags.GivenArgs(c), pins, settings.FlagDryRun)
	_, err := fmt.Fprintf(w, "dry run: %s; a run resolves a duration again when it starts, so to replay the window read here run:\n  %s\n",
		strings.Join(said, ", "), line)
	if err == nil && pins[settings.FlagTo] == "" {
		_, err = fmt.Fprintln(w, "  (without --to it reads up to each partition's end when it starts, past where this dry run stopped)")
	}
	if err == nil && strings.Contains(line, ":xxxxx@") {
		_, err = fmt.Fprintln(w, "  (a URL's password is shown as xxxxx: give it again, or use --redis-password-file)")
	}
	return err
}
