package termui

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// StatusJSON writes a group's status as indented JSON and a newline (the
// fields of admin.GroupStatus, or of a document embedding it); its error
// says which step failed.
func StatusJSON(out io.Writer, st any) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("status as JSON: %w", err)
	}
	if _, err := fmt.Fprintf(out, "%s\n", b); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}

// StatusTable writes a group's status as a header (group, type, state,
// epoch, members, lag), a line per member, and a table of its partitions;
// it returns the first write error.
func StatusTable(out io.Writer, st admin.GroupStatus) error {
	w := &stickyWriter{w: out}
	epoch := "n/a (classic groups do not report their generation)"
	if st.Epoch != nil {
		epoch = fmt.Sprint(*st.Epoch)
	}
	fmt.Fprintf(w, "group %s  type %s  state %s  epoch %s  members %d  lag %d\n",
		st.Group, st.Type, st.State, epoch, len(st.Members), st.Lag)
	for _, m := range st.Members {
		if m.Epoch != nil {
			fmt.Fprintf(w, "  member %s  client %s  host %s  member-epoch %d\n", m.ID, m.ClientID, m.Host, *m.Epoch)
		} else {
			fmt.Fprintf(w, "  member %s  client %s  host %s\n", m.ID, m.ClientID, m.Host)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCOMMITTED\tLAST-STABLE\tLOG-END\tLAG\tMEMBER")
	for _, p := range st.Partitions {
		committed, member := fmt.Sprint(p.Committed), p.Member
		if p.Committed < 0 {
			committed = "-"
		}
		if member == "" {
			member = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%s\n", p.Topic, p.Partition, committed, p.LastStable, p.LogEnd, p.Lag, member)
	}
	_ = tw.Flush()
	return w.err
}

// MovesTable writes the offsets reset-offsets moves (or, with dry, would
// move) for group on topic: a header and a line per partition, before ("-"
// for nothing committed) and after; it returns the first write error.
func MovesTable(out io.Writer, group, topic string, moves []admin.Move, dry bool) error {
	w := &stickyWriter{w: out}
	if dry {
		fmt.Fprintf(w, "dry run: group %s topic %s (nothing committed)\n", group, topic)
	} else {
		fmt.Fprintf(w, "group %s topic %s: offsets moved\n", group, topic)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PARTITION\tBEFORE\tAFTER\t")
	for _, m := range moves {
		before := "-"
		if m.Before >= 0 {
			before = strconv.FormatInt(m.Before, 10)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t\n", m.Partition, before, m.After)
	}
	_ = tw.Flush()
	return w.err
}

// LogReplaySummary logs one line per partition of replay id over topic
// and a total line. Each counts every record read: read = applied +
// suppressed + poison for a partition that is done. dry marks a dry run.
func LogReplaySummary(log *slog.Logger, id, topic string, dry bool, ps []pipeline.ReplayProgress) {
	var t pipeline.ReplayProgress
	for _, p := range ps {
		log.Info("replay partition", "id", id, "topic", topic, "partition", p.Partition, "dry_run", dry,
			"from", p.From, "to", p.To, "began", p.Begin, "reached", p.Landed, "done", p.Done, "read", p.Read,
			"applied", p.Applied, "suppressed", p.Suppressed, "poison", p.Poison, "dead_letter_replays", p.DeadLetterReplays)
		t.Read += p.Read
		t.Applied += p.Applied
		t.Suppressed += p.Suppressed
		t.Poison += p.Poison
		t.DeadLetterReplays += p.DeadLetterReplays
	}
	log.Info("replay summary", "id", id, "topic", topic, "dry_run", dry, "partitions", len(ps), "read", t.Read,
		"applied", t.Applied, "suppressed", t.Suppressed, "poison", t.Poison, "dead_letter_replays", t.DeadLetterReplays)
}

// ReplaySummary writes the table that ends replay id over topic: a line
// per partition and a total line (a dry run's columns say WOULD-APPLY and
// WOULD-SUPPRESS); it returns the first write error.
func ReplaySummary(out io.Writer, id, topic string, dry bool, ps []pipeline.ReplayProgress) error {
	w := &stickyWriter{w: out}
	what := "replay"
	ap, su := "APPLIED", "SUPPRESSED"
	if dry {
		what, ap, su = "dry run (nothing written)", "WOULD-APPLY", "WOULD-SUPPRESS"
	}
	fmt.Fprintf(w, "%s %s of %s\n", what, id, topic)
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

// stickyWriter keeps the first write error and drops every write after it.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// LogResumedPlan logs that replay id over topic reuses the plan p its
// first run stored: a line naming when it was stored, the bounds it was
// given and its ranges, then a line per range.
func LogResumedPlan(log *slog.Logger, id, topic string, p pipeline.StoredPlan) {
	log.Info("replay id used before: reusing the ranges its first run planned", "id", id, "topic", topic,
		"stored_at", p.At.UTC().Format(time.RFC3339), "given", p.Given, "ranges", p.String())
	for _, rg := range p.Ranges {
		log.Info("stored replay range", "partition", rg.Partition, "from", rg.From, "to", rg.To)
	}
}

// ManifestLine writes the manifest m of the ledger under prefix as one
// line of status's table; nil: it has none.
func ManifestLine(w io.Writer, prefix string, m *sink.Manifest) error {
	if m == nil {
		_, err := fmt.Fprintf(w, "ledger %q: no manifest (no run or replay wrote one yet)\n", prefix)
		return err
	}
	totals := ""
	if m.Effect == "totals" {
		totals = fmt.Sprintf(" (hash %q, group %q, amount %q)", m.TotalsHash, m.TotalsGroupField, m.TotalsAmountField)
	}
	_, err := fmt.Fprintf(w, "ledger %q: effect %s%s, key space %s, claim format %d, made %s by %s\n", prefix, m.Effect, totals,
		m.KeySpace, m.ClaimFormat, m.CreatedAt.Format("2006-01-02T15:04:05Z"), m.CreatedBy)
	return err
}
