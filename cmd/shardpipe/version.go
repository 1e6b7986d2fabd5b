package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/buildinfo"
)

// fVersion is the root's --version, which prints what version prints.
const fVersion = "version"

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print the version, the Go version and the source revision (also: shardpipe --version)",
		UsageText: "shardpipe version",
		Action: func(_ context.Context, c *cli.Command) error {
			return printVersion(c)
		},
	}
}

// printVersion writes the build information (buildinfo.Write) to stdout.
func printVersion(c *cli.Command) error {
	if err := buildinfo.Write(c.Root().Writer); err != nil {
		return failure(fmt.Errorf("write the version: %w", err))
	}
	return nil
}
