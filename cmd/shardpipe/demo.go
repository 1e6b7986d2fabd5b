package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/demo"
	"github.com/shardpipe/shardpipe/pipeline"
)

const (
	fDemoProtocol = "group-protocol"
	fDemoOrders   = "rebalance-orders"
	fDemoTimeout  = "timeout"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "see the guarantees at work on an in-process Kafka and Redis (no servers needed)",
		UsageText: `shardpipe demo [--group-protocol classic|consumer]

Examples:
   go run ./cmd/shardpipe demo
   shardpipe demo --group-protocol consumer`,
		Description: "Starts an in-process Kafka broker (kfake) and Redis (miniredis), then runs two scenarios\n" +
			"through the real pipeline and ledger code: a consumer that crashes between effect and commit\n" +
			"and is resumed by another, and a rebalance while orders arrive. Takes a few seconds.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: fDemoProtocol, Value: "classic", Sources: fromEnv("demo-" + fDemoProtocol),
				Usage: "consumer group protocol: classic or consumer (KIP-848)"},
			&cli.IntFlag{Name: fDemoOrders, Value: 3000, Sources: fromEnv("demo-" + fDemoOrders),
				Usage: "orders in the rebalance scenario"},
			&cli.DurationFlag{Name: fDemoTimeout, Value: 2 * time.Minute, Sources: fromEnv("demo-" + fDemoTimeout),
				Usage: "give up after this long"},
		},
		Action: demoAction,
	}
}

func demoAction(ctx context.Context, c *cli.Command) error {
	var bad problems
	proto, err := pipeline.ParseProtocol(c.String(fDemoProtocol))
	if err != nil {
		bad.addf("--%s %q: want classic or consumer", fDemoProtocol, c.String(fDemoProtocol))
	}
	orders := int(c.Int(fDemoOrders))
	if orders < 30 {
		bad.addf("--%s %d: want 30 or more", fDemoOrders, orders)
	}
	timeout := c.Duration(fDemoTimeout)
	if timeout <= 0 {
		bad.addf("--%s %v: must be positive", fDemoTimeout, timeout)
	}
	if len(bad) > 0 {
		return usageErr(bad...)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := demo.Run(ctx, c.Root().Writer, proto, orders); err != nil {
		return failure(fmt.Errorf("demo: %w", err))
	}
	return nil
}
