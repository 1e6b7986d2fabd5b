package cliflags

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"
)

// A Group is flags that several commands take, defined once with the one
// validator of their values. A group is bound to the configuration fields
// it fills: Load reads the parsed flags into them and adds one line per
// problem to bad. Groups load in order, so a group may read what an
// earlier one loaded.
type Group struct {
	// Flags are the group's flags; Command gives each its variable.
	Flags []cli.Flag
	// Load reads the flags; nil checks nothing.
	Load func(c *cli.Command, bad *Problems)
}

// NewGroup makes a Group of flags and load (nil: nothing to check).
func NewGroup(load func(c *cli.Command, bad *Problems), flags ...cli.Flag) Group {
	if load == nil {
		load = func(*cli.Command, *Problems) {}
	}
	return Group{Flags: flags, Load: load}
}

// Config is a command's configuration: the groups its flags come in, bound
// to its fields. Groups is called once for the flags and once on a new
// configuration for each run.
type Config interface{ Groups() []Group }

// Problems collects one line per invalid setting.
type Problems []string

// Addf adds a line.
func (p *Problems) Addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// UsageError is invalid settings, one line per problem.
type UsageError struct {
	// Lines are the problems, one each.
	Lines []string
}

func (e *UsageError) Error() string { return strings.Join(e.Lines, "; ") }

// Metadata keys of a command made by Command.
const (
	metaSources  = "cliflags.sources"
	metaProblems = "cliflags.problems"
	metaArgs     = "cliflags.args"
)

// flagProblem is one unusable flag of a command line or the environment.
type flagProblem struct {
	flag string // the flag's name ("" for an unknown flag); its value is not used
	line string
}

// Command completes cmd with the flags of T's groups, each read from its
// variable e.Name(flag), and an action that loads them and calls run.
// The command takes no arguments. Every problem of the command line
// (CheckArgs, arguments), the environment and the settings is first
// returned as one *UsageError, one line each; a
// setting's problem that names a flag whose given value was unusable is
// left out, since it judged the default instead.
func Command[T any, P interface {
	*T
	Config
}](e Env, cmd *cli.Command, run func(context.Context, *cli.Command, P) error) *cli.Command {
	sources := map[string]*envVar{}
	for _, g := range P(new(T)).Groups() {
		for _, f := range g.Flags {
			sources[f.Names()[0]] = e.source(f)
			cmd.Flags = append(cmd.Flags, f)
		}
	}
	cmd.Metadata = map[string]any{metaSources: sources}
	cmd.Action = func(ctx context.Context, c *cli.Command) error {
		probs, _ := c.Metadata[metaProblems].([]flagProblem)
		if c.Args().Len() > 0 {
			probs = append(probs, flagProblem{line: fmt.Sprintf("%s takes no arguments, got %q", c.Name, c.Args().Slice())})
		}
		for _, f := range c.Flags {
			if s := sources[f.Names()[0]]; s != nil && s.problem != "" {
				probs = append(probs, flagProblem{flag: s.flag, line: s.problem})
			}
		}
		cfg, bad := load[T, P](c)
		lines := make([]string, 0, len(probs)+len(bad))
		for _, p := range probs {
			lines = append(lines, p.line)
		}
		for _, l := range bad {
			if !slices.ContainsFunc(probs, func(p flagProblem) bool { return p.flag != "" && strings.Contains(l, "--"+p.flag+" (") }) {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 {
			return &UsageError{Lines: lines}
		}
		return run(ctx, c, cfg)
	}
	return cmd
}

// Load reads every group of a new T from c; it returns a *UsageError
// naming each problem.
func Load[T any, P interface {
	*T
	Config
}](c *cli.Command) (P, error) {
	cfg, bad := load[T, P](c)
	if len(bad) > 0 {
		return cfg, &UsageError{Lines: bad}
	}
	return cfg, nil
}

func load[T any, P interface {
	*T
	Config
}](c *cli.Command) (P, Problems) {
	cfg := P(new(T))
	var bad Problems
	for _, g := range cfg.Groups() {
		g.Load(c, &bad)
	}
	return cfg, bad
}

// Then returns g with after run once g's Load is done, whatever it found:
// to copy or derive what g loaded into fields of the caller's own.
func Then(g Group, after func()) Group {
	load := g.Load
	return Group{Flags: g.Flags, Load: func(c *cli.Command, bad *Problems) { load(c, bad); after() }}
}
