package settings

import (
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
)

// Probe is the probe command's settings, all of them (a cliflags.Config):
// which of a running shardpipe's probes to ask (opshttp.Ask) and how long
// to wait.
type Probe struct {
	// URL is the probe to ask, such as http://127.0.0.1:9464/readyz.
	URL string
	// Timeout is how long to wait for the answer; positive.
	Timeout time.Duration
}

// Groups is the probe's one group, its flags loaded into p.
func (p *Probe) Groups() []cliflags.Group {
	return []cliflags.Group{cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		p.URL, p.Timeout = c.String("url"), timeout(bad, c, fDemoTimeout)
	},
		&cli.StringFlag{Name: "url", Value: "http://127.0.0.1:9464/readyz", Usage: "the probe to ask"},
		&cli.DurationFlag{Name: fDemoTimeout, Value: 5 * time.Second, Usage: "how long to wait for the answer"})}
}
