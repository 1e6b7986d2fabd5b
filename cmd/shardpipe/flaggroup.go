package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"
)

// A flagGroup is flags that several commands take, defined once with the
// one validator of their values. A group is bound to the config fields it
// fills (see kafkaGroup): load reads the parsed flags into them and adds
// one line per problem to bad. Groups load in order, so a group may read
// what an earlier one loaded (the ledger reads --redis-cluster).
//
// To give several commands a new group (TLS, health...): write its
// constructor once, next to kafkaGroup; add its config field and one line
// to the groups() of each command that takes it. A flag added to an
// existing group (SASL in kafkaGroup) reaches every command of the group
// with no other change. Every flag gets its environment variable from
// command (withEnv): none is declared by hand.
type flagGroup struct {
	flags []cli.Flag
	load  func(c *cli.Command, bad *problems)
}

// group makes a flagGroup of flags and load (nil: nothing to check).
func group(load func(c *cli.Command, bad *problems), flags ...cli.Flag) flagGroup {
	if load == nil {
		load = func(*cli.Command, *problems) {}
	}
	return flagGroup{flags: flags, load: load}
}

// config is a command's configuration: the groups its flags come in, bound
// to its fields.
type config interface{ groups() []flagGroup }

// problems collects one line per invalid setting.
type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// envSources is the Metadata key of a command's flag sources, by flag name.
const envSources = "envSources"

// command completes cmd with the flags of T's groups (each read from its
// environment variable) and an action that loads them and calls run. Every
// problem of the command line (checkArgs), the environment and the
// settings is reported first, one line each (exit 2); a setting's problem
// that names a flag whose given value was unusable is left out, since it
// judged the default instead.
func command[T any, P interface {
	*T
	config
}](cmd *cli.Command, run func(context.Context, *cli.Command, P) error) *cli.Command {
	sources := map[string]*envVar{}
	for _, g := range P(new(T)).groups() {
		for _, f := range g.flags {
			sources[f.Names()[0]] = withEnv(f)
			cmd.Flags = append(cmd.Flags, f)
		}
	}
	cmd.Metadata = map[string]any{envSources: sources}
	cmd.Action = func(ctx context.Context, c *cli.Command) error {
		probs, _ := c.Metadata[argProblems].([]flagProblem)
		for _, f := range c.Flags {
			if s := sources[f.Names()[0]]; s != nil && s.problem != "" {
				probs = append(probs, flagProblem{flag: s.flag, line: s.problem})
			}
		}
		cfg := P(new(T))
		var bad problems
		for _, g := range cfg.groups() {
			g.load(c, &bad)
		}
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
			return usageErr(lines...)
		}
		return run(ctx, c, cfg)
	}
	return cmd
}

// load reads every group of a new T from c; it returns a usage error
// naming each problem.
func load[T any, P interface {
	*T
	config
}](c *cli.Command) (P, error) {
	cfg := P(new(T))
	var bad problems
	for _, g := range cfg.groups() {
		g.load(c, &bad)
	}
	if len(bad) > 0 {
		return cfg, usageErr(bad...)
	}
	return cfg, nil
}
