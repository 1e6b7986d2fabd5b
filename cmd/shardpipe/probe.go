package main

import (
	"context"
	"errors"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/opshttp"
)

// probeCommand is `shardpipe probe`: a health check for images with no
// shell or curl (the distroless image of the Dockerfile), as a
// docker-compose healthcheck.
func probeCommand() *cli.Command {
	return cliflags.Command(env, &cli.Command{
		Name:      "probe",
		Usage:     "ask a running shardpipe's /readyz (or /healthz): exit 0 when ready, 1 when not, 3 when it does not answer",
		UsageText: "shardpipe probe [--url http://127.0.0.1:9464/readyz]   (e.g. a docker-compose healthcheck of run --metrics-addr :9464)",
	}, probeAction)
}

func probeAction(ctx context.Context, c *cli.Command, pc *settings.Probe) error {
	body, err := opshttp.Ask(ctx, pc.URL, pc.Timeout)
	_, _ = c.Root().Writer.Write(body)
	switch {
	case errors.Is(err, opshttp.ErrNotReady):
		return failure(err)
	case err != nil:
		return unavailableErr("probe: " + err.Error())
	}
	return nil
}
