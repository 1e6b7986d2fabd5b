package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/internal/demo"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of demo (and fGroupProtocol, as run's).
const (
	fDemoOrders  = "rebalance-orders"
	fDemoTimeout = "timeout"
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

// demoConfig is demo's validated configuration.
type demoConfig struct {
	proto   pipeline.Protocol
	orders  int
	timeout time.Duration
}

func (dc *demoConfig) Groups() []cliflags.Group {
	return []cliflags.Group{cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		var err error
		if dc.proto, err = pipeline.ParseProtocol(c.String(fGroupProtocol)); err != nil {
			bad.Addf("%s %q: want classic or consumer", flagRef(fGroupProtocol), c.String(fGroupProtocol))
		}
		if dc.orders = c.Int(fDemoOrders); dc.orders < 30 {
			bad.Addf("%s %d: want 30 or more", flagRef(fDemoOrders), dc.orders)
		}
		dc.timeout = positive(bad, c, fDemoTimeout)
	},
		&cli.StringFlag{Name: fGroupProtocol, Value: "classic", Usage: "consumer group protocol: classic or consumer (KIP-848)"},
		&cli.IntFlag{Name: fDemoOrders, Value: 3000, Usage: "orders in the rebalance scenario"},
		&cli.DurationFlag{Name: fDemoTimeout, Value: 2 * time.Minute, Usage: "give up after this long"})}
}

func demoAction(ctx context.Context, c *cli.Command, dc *demoConfig) error {
	proto, orders, timeout := dc.proto, dc.orders, dc.timeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := demo.Run(ctx, c.Root().Writer, proto, orders, timeout); err != nil {
		return failure(fmt.Errorf("demo: %w", err))
	}
	return nil
}
