// Package settings holds the flag groups of shardpipe's commands whose
// settings configure the library: the ledger and its effect, --effect
// http, what the ledger's Redis must promise, the commit policy,
// concurrent effects, poison records, how run consumes, replay's range
// and pace, where reset-offsets moves a group, the partitions replay and
// reset-offsets work on, the metrics address, produce's orders and the
// demo. Each group is its
// flags, defined once, and the check that turns them into a typed value
// (one problem line per bad setting, naming the flag and its variable);
// the value gives the library what it takes (a Spec, appliers,
// pipeline options). cmd/shardpipe composes the groups into commands,
// renders and wires; it imports cliflags, flagcheck, sink, pipeline,
// httpeffect, admin, opshttp (the readiness probe's key) and internal/orders.
package settings

import (
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
)

// Env names the flags' environment variables (SHARDPIPE_ and the flag's
// name), as cmd/shardpipe does.
const Env cliflags.Env = "SHARDPIPE_"

// ref names a flag and its variable for messages: "--ttl (SHARDPIPE_TTL)".
func ref(flag string) string { return Env.Ref(flag) }

// timeout reads the duration flag name, a timeout (Timeouts).
func timeout(bad *cliflags.Problems, c *cli.Command, name string) time.Duration {
	return DurationIn(c, bad, name, Timeouts())
}
