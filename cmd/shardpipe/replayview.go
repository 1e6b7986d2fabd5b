package main

import (
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/shardpipe/shardpipe/pipeline"
)

// logReplaySummary logs one line per partition and a total line.
// Each counts every record read: read = applied + suppressed + poison for a
// partition that is done.
func logReplaySummary(log *slog.Logger, rc *replayConfig, ps []pipeline.ReplayProgress) {
	var t pipeline.ReplayProgress
	for _, p := range ps {
		log.Info("replay partition", "id", rc.id, "topic", rc.topic, "partition", p.Partition, "dry_run", rc.dryRun,
			"from", p.From, "to", p.To, "began", p.Begin, "reached", p.Landed, "done", p.Done, "read", p.Read,
			"applied", p.Applied, "suppressed", p.Suppressed, "poison", p.Poison, "dead_letter_replays", p.DeadLetterReplays)
		t.Read += p.Read
		t.Applied += p.Applied
		t.Suppressed += p.Suppressed
		t.Poison += p.Poison
		t.DeadLetterReplays += p.DeadLetterReplays
	}
	log.Info("replay summary", "id", rc.id, "topic", rc.topic, "dry_run", rc.dryRun, "partitions", len(ps), "read", t.Read,
		"applied", t.Applied, "suppressed", t.Suppressed, "poison", t.Poison, "dead_letter_replays", t.DeadLetterReplays)
}

// printReplaySummary writes the table that ends a replay.
func printReplaySummary(out io.Writer, rc *replayConfig, ps []pipeline.ReplayProgress) error {
	w := &stickyWriter{w: out}
	what := "replay"
	ap, su := "APPLIED", "SUPPRESSED"
	if rc.dryRun {
		what, ap, su = "dry run (nothing written)", "WOULD-APPLY", "WOULD-SUPPRESS"
	}
	fmt.Fprintf(w, "%s %s of %s\n", what, rc.id, rc.topic)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "PARTITION\tFROM\tTO\tBEGAN\tREACHED\tREAD\t%s\t%s\tPOISON\tSTATE\t\n", ap, su)
	var read, applied, suppressed, poison int64
	for _, p := range ps {
		state := "stopped"
		if p.Done {
			state = "done"
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", p.Partition, p.From, p.To, p.Begin, p.Landed,
			p.Read, p.Applied, p.Suppressed, p.Poison, state)
		read += p.Read
		applied += p.Applied
		suppressed += p.Suppressed
		poison += p.Poison
	}
	fmt.Fprintf(tw, "total\t\t\t\t\t%d\t%d\t%d\t%d\t\t\n", read, applied, suppressed, poison)
	_ = tw.Flush()
	return w.err
}
