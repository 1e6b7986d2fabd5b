package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/urfave/cli/v3"
)

// probeCommand is `shardpipe probe`: a health check for images with no
// shell or curl (the distroless image of the Dockerfile), as a
// docker-compose healthcheck.
func probeCommand() *cli.Command {
	return &cli.Command{
		Name:  "probe",
		Usage: "ask a running shardpipe's /readyz (or /healthz): exit 0 when ready, 1 when not, 3 when it does not answer",
		UsageText: `shardpipe probe [--url http://127.0.0.1:9464/readyz]

Examples:
   # a docker-compose healthcheck of a run with --metrics-addr :9464
   shardpipe probe --url http://127.0.0.1:9464/readyz`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "url", Value: "http://127.0.0.1:9464/readyz", Usage: "the probe to ask"},
			&cli.DurationFlag{Name: "timeout", Value: 5 * time.Second, Usage: "how long to wait for the answer"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			ctx, cancel := context.WithTimeout(ctx, c.Duration("timeout"))
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.String("url"), nil)
			if err != nil {
				return usageErr(fmt.Sprintf("--url %q: %v", c.String("url"), err))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return &exitError{code: exitUnavailable, lines: []string{fmt.Sprintf("probe: %v", err)}}
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			_, _ = c.Root().Writer.Write(body)
			if resp.StatusCode != http.StatusOK {
				return failure(fmt.Errorf("probe: %s answered %s", c.String("url"), resp.Status))
			}
			return nil
		},
	}
}
