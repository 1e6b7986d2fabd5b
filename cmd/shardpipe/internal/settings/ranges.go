package settings

import (
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
)

// Timeouts returns the range of every timeout flag (--connect-timeout,
// --shutdown-timeout, --session-timeout, --timeout, --delivery-timeout):
// 1ms to 1h.
func Timeouts() flagcheck.Range[time.Duration] {
	return flagcheck.In(time.Millisecond, time.Hour, "")
}

// IntIn reads the int flag name and adds a problem line to bad unless r
// holds its value ("--dlq-window (SHARDPIPE_DLQ_WINDOW) 0: want 1 to
// 100000"). docs/configuration.md's table of ranges lists every range a command checks.
func IntIn(c *cli.Command, bad *cliflags.Problems, name string, r flagcheck.Range[int]) int {
	v := c.Int(name)
	if msg := r.Check(v); msg != "" {
		bad.Addf("%s %d: %s", ref(name), v, msg)
	}
	return v
}

// FloatIn is IntIn for a float flag; NaN and the infinities are outside
// every range.
func FloatIn(c *cli.Command, bad *cliflags.Problems, name string, r flagcheck.Range[float64]) float64 {
	v := c.Float(name)
	if msg := r.Check(v); msg != "" {
		bad.Addf("%s %v: %s", ref(name), v, msg)
	}
	return v
}

// DurationIn is IntIn for a duration flag.
func DurationIn(c *cli.Command, bad *cliflags.Problems, name string, r flagcheck.Range[time.Duration]) time.Duration {
	v := c.Duration(name)
	if msg := r.Check(v); msg != "" {
		bad.Addf("%s %v: %s", ref(name), v, msg)
	}
	return v
}
