package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/buildinfo"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print the version, the Go version and the source revision",
		UsageText: "shardpipe version",
		Action: func(_ context.Context, c *cli.Command) error {
			buildinfo.Write(c.Root().Writer)
			return nil
		},
	}
}
