package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/bench"
)

// benchWorkerCommand is the child process of bench: it measures one mode
// and prints the result as JSON on stdout. Hidden: bench starts it.
func benchWorkerCommand() *cli.Command {
	return &cli.Command{
		Name:   "bench-worker",
		Hidden: true,
		Usage:  "measure one bench mode (started by shardpipe bench)",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "spec", Usage: "the mode and its settings, JSON", Required: true}},
		Action: func(ctx context.Context, c *cli.Command) error {
			var spec bench.Spec
			if err := json.Unmarshal([]byte(c.String("spec")), &spec); err != nil {
				return usageErr(fmt.Sprintf("--spec: %v", err))
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := newLogger(c.Root().ErrWriter, "text", slog.LevelWarn)
			res, err := bench.RunWorker(ctx, spec, log)
			if err != nil {
				return failure(err)
			}
			if err := json.NewEncoder(c.Root().Writer).Encode(res); err != nil {
				return failure(fmt.Errorf("bench-worker: write the result: %w", err))
			}
			return nil
		},
	}
}
