package main

import (
	"context"
	"fmt"

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

// command completes cmd with the flags of T's groups (each read from its
// environment variable) and an action that loads them, reports every
// problem of the environment and the flags, one line each (exit 2), and
// only then calls run.
func command[T any, P interface {
	*T
	config
}](cmd *cli.Command, run func(context.Context, *cli.Command, P) error) *cli.Command {
	var sources []*envVar
	for _, g := range P(new(T)).groups() {
		for _, f := range g.flags {
			sources = append(sources, withEnv(f))
			cmd.Flags = append(cmd.Flags, f)
		}
	}
	cmd.Action = func(ctx context.Context, c *cli.Command) error {
		var bad problems
		for _, s := range sources {
			if s.problem != "" {
				bad = append(bad, s.problem)
			}
		}
		cfg, err := load[T, P](c, bad)
		if err != nil {
			return err
		}
		return run(ctx, c, cfg)
	}
	return cmd
}

// load reads every group of a new T from c after the problems already
// found; it returns a usage error naming each problem.
func load[T any, P interface {
	*T
	config
}](c *cli.Command, bad problems) (P, error) {
	cfg := P(new(T))
	for _, g := range cfg.groups() {
		g.load(c, &bad)
	}
	if len(bad) > 0 {
		return cfg, usageErr(bad...)
	}
	return cfg, nil
}
