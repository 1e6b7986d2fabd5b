package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
)

// replayView shows a replay's progress while it runs: on a terminal a bar per
// partition with its rate and ETA, redrawn in place; otherwise a log line
// every interval.
type replayView struct {
	w        io.Writer
	progress func() []pipeline.ReplayProgress
	dry      bool
	log      *slog.Logger
	stop     chan struct{}
	done     chan struct{}
	drawn    int // lines drawn by the last frame on a terminal
	last     map[int32]int64
	lastAt   time.Time
	rate     map[int32]float64 // records per second, smoothed
}

func newReplayView(w io.Writer, progress func() []pipeline.ReplayProgress, dry bool, interval time.Duration, log *slog.Logger) *replayView {
	v := &replayView{w: w, progress: progress, dry: dry, log: log, stop: make(chan struct{}), done: make(chan struct{}),
		last: map[int32]int64{}, rate: map[int32]float64{}}
	term := isTerminal(w)
	if term {
		interval = 200 * time.Millisecond
	}
	if interval <= 0 {
		close(v.done)
		return v
	}
	go v.loop(interval, term)
	return v
}

func (v *replayView) loop(interval time.Duration, term bool) {
	defer close(v.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			if term {
				v.frame()
			}
			return
		case <-t.C:
			if term {
				v.frame()
			} else {
				v.line()
			}
		}
	}
}

// close stops the display after a last frame.
func (v *replayView) close() {
	select {
	case <-v.done:
		return
	default:
	}
	close(v.stop)
	<-v.done
}

// sample updates each partition's smoothed rate from its landed offset.
func (v *replayView) sample(ps []pipeline.ReplayProgress) {
	now := time.Now()
	dt := now.Sub(v.lastAt).Seconds()
	for _, p := range ps {
		if prev, ok := v.last[p.Partition]; ok && dt > 0 {
			r := float64(p.Landed-prev) / dt
			v.rate[p.Partition] = 0.7*v.rate[p.Partition] + 0.3*r
		}
		v.last[p.Partition] = p.Landed
	}
	v.lastAt = now
}

func (v *replayView) frame() {
	ps := v.progress()
	v.sample(ps)
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.drawn)
	}
	for _, p := range ps {
		fmt.Fprintf(&b, "\r\x1b[Kpartition %-3d %s\n", p.Partition, bar(p, v.rate[p.Partition], 30))
	}
	v.drawn = len(ps)
	_, _ = io.WriteString(v.w, b.String())
}

// bar renders one partition: [=====>    ] done/total pct rate ETA.
func bar(p pipeline.ReplayProgress, rate float64, width int) string {
	total := max(p.To-p.Begin, 0)
	done := min(max(p.Landed-p.Begin, 0), total)
	frac := 1.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	fill := int(frac * float64(width))
	s := strings.Repeat("=", fill)
	if fill < width {
		s += ">" + strings.Repeat(" ", width-fill-1)
	}
	eta := "-"
	switch {
	case p.Done:
		eta = "done"
	case rate > 0:
		eta = (time.Duration(float64(total-done)/rate) * time.Second).Round(time.Second).String()
	}
	return fmt.Sprintf("[%s] %d/%d %3.0f%% %6.0f rec/s ETA %s", s, done, total, frac*100, rate, eta)
}

// line logs the overall progress once.
func (v *replayView) line() {
	ps := v.progress()
	v.sample(ps)
	var total, done, applied, suppressed int64
	var rate float64
	finished := 0
	for _, p := range ps {
		t := max(p.To-p.Begin, 0)
		total += t
		done += min(max(p.Landed-p.Begin, 0), t)
		applied += p.Applied
		suppressed += p.Suppressed
		rate += v.rate[p.Partition]
		if p.Done {
			finished++
		}
	}
	eta := "-"
	if rate > 0 {
		eta = (time.Duration(float64(total-done)/rate) * time.Second).Round(time.Second).String()
	}
	v.log.Info("replay progress", "dry_run", v.dry, "read", done, "total", total, "records_per_sec", int64(rate),
		"eta", eta, "partitions_done", finished, "partitions", len(ps), "applied", applied, "suppressed", suppressed)
}

// logReplaySummary logs one line per partition and a total line.
func logReplaySummary(log *slog.Logger, rc replayConfig, ps []pipeline.ReplayProgress) {
	var applied, suppressed, rejected int64
	for _, p := range ps {
		log.Info("replay partition", "id", rc.id, "topic", rc.topic, "partition", p.Partition, "dry_run", rc.dryRun,
			"from", p.From, "to", p.To, "began", p.Begin, "reached", p.Landed, "done", p.Done,
			"applied", p.Applied, "suppressed", p.Suppressed, "rejected", p.Poison)
		applied += p.Applied
		suppressed += p.Suppressed
		rejected += p.Poison
	}
	log.Info("replay summary", "id", rc.id, "topic", rc.topic, "dry_run", rc.dryRun, "partitions", len(ps),
		"applied", applied, "suppressed", suppressed, "rejected", rejected)
}

// printReplaySummary writes the table that ends a replay.
func printReplaySummary(out io.Writer, rc replayConfig, ps []pipeline.ReplayProgress) error {
	w := &stickyWriter{w: out}
	what := "replay"
	ap, su := "APPLIED", "SUPPRESSED"
	if rc.dryRun {
		what, ap, su = "dry run (nothing written)", "WOULD-APPLY", "WOULD-SUPPRESS"
	}
	fmt.Fprintf(w, "%s %s of %s\n", what, rc.id, rc.topic)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "PARTITION\tFROM\tTO\tBEGAN\tREACHED\t%s\t%s\tREJECTED\tSTATE\t\n", ap, su)
	var applied, suppressed, rejected int64
	for _, p := range ps {
		state := "stopped"
		if p.Done {
			state = "done"
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", p.Partition, p.From, p.To, p.Begin, p.Landed,
			p.Applied, p.Suppressed, p.Poison, state)
		applied += p.Applied
		suppressed += p.Suppressed
		rejected += p.Poison
	}
	fmt.Fprintf(tw, "total\t\t\t\t\t%d\t%d\t%d\t\t\n", applied, suppressed, rejected)
	_ = tw.Flush()
	return w.err
}
