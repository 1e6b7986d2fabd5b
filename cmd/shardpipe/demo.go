package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/demo"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
)

func demoCommand() *cli.Command {
	return cliflags.Command(env, &cli.Command{
		Name:  "demo",
		Usage: "see the guarantees at work on an in-process Kafka and Redis (no servers needed)",
		UsageText: `shardpipe demo [--group-protocol classic|consumer]

Examples:
   go run ./cmd/shardpipe demo
   shardpipe demo --group-protocol consumer`,
		Description: "Starts an in-process Kafka broker (kfake) and Redis (miniredis), then runs two scenarios\n" +
			"through the real pipeline and ledger code: a consumer that crashes between effect and commit\n" +
			"and is resumed by another, and a rebalance while orders arrive. Takes a few seconds.",
	}, demoAction)
}

// demoAction runs the demo (demo.Run) within --timeout.
func demoAction(ctx context.Context, c *cli.Command, dc *settings.Demo) error {
	ctx, cancel := context.WithTimeout(ctx, dc.Timeout)
	defer cancel()
	if err := demo.Run(ctx, c.Root().Writer, dc.Protocol, dc.Orders, dc.Timeout); err != nil {
		return failure(fmt.Errorf("demo: %w", err))
	}
	return nil
}
