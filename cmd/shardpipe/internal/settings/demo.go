package settings

import (
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
)

const (
	fGroupProtocol = "group-protocol"
	fDemoOrders    = "rebalance-orders"
	fDemoTimeout   = "timeout" // the probe's too
)

// Demo is the demo command's settings, all of them (a cliflags.Config).
type Demo struct {
	// Protocol is the consumer group protocol the scenarios use.
	Protocol pipeline.Protocol
	// Orders is the number of orders of the rebalance scenario, at least 30.
	Orders int
	// Timeout bounds the whole demo.
	Timeout time.Duration
}

// Groups is the demo's one group (DemoGroup).
func (d *Demo) Groups() []cliflags.Group { return []cliflags.Group{DemoGroup(d)} }

// DemoGroup is the demo's flags, loaded into d.
func DemoGroup(d *Demo) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		var err error
		if d.Protocol, err = pipeline.ParseProtocol(c.String(fGroupProtocol)); err != nil {
			bad.Addf("%s %q: want classic or consumer", ref(fGroupProtocol), c.String(fGroupProtocol))
		}
		d.Orders = IntIn(c, bad, fDemoOrders, flagcheck.In(30, 100_000, ""))
		d.Timeout = timeout(bad, c, fDemoTimeout)
	},
		&cli.StringFlag{Name: fGroupProtocol, Value: "classic", Usage: "consumer group protocol: classic or consumer (KIP-848)"},
		&cli.IntFlag{Name: fDemoOrders, Value: 3000, Usage: "orders in the rebalance scenario"},
		&cli.DurationFlag{Name: fDemoTimeout, Value: 2 * time.Minute, Usage: "give up after this long"})
}
