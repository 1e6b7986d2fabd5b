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

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/bench"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
)

// workerSpec is bench-worker's --spec: the mode and its settings.
type workerSpec struct{ bench.Spec }

func (ws *workerSpec) Groups() []cliflags.Group {
	return []cliflags.Group{cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		if err := json.Unmarshal([]byte(c.String("spec")), &ws.Spec); err != nil {
			bad.Addf("%s: %v", flagRef("spec"), err)
		}
	}, &cli.StringFlag{Name: "spec", Usage: "the mode and its settings, JSON", Required: true})}
}

// benchWorkerCommand is the child process of bench: it measures one mode
// and prints the result as JSON on stdout. Hidden: bench starts it.
func benchWorkerCommand() *cli.Command {
	return cliflags.Command(env, &cli.Command{
		Name:   "bench-worker",
		Hidden: true,
		Usage:  "measure one bench mode (started by shardpipe bench)",
	}, func(ctx context.Context, c *cli.Command, ws *workerSpec) error {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		res, err := bench.RunWorker(ctx, ws.Spec, newLogger(c.Root().ErrWriter, logConfig{format: "text", level: slog.LevelWarn}))
		if err != nil {
			return failure(err)
		}
		if err := json.NewEncoder(c.Root().Writer).Encode(res); err != nil {
			return failure(fmt.Errorf("bench-worker: write the result: %w", err))
		}
		return nil
	})
}
