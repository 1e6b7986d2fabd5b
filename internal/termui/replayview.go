package termui

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
)

// ReplayView shows a replay's progress while it runs: on a terminal a bar per
// partition with its rate and ETA, redrawn in place; otherwise a log line
// every interval.
type ReplayView struct {
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

// NewReplayView starts showing the progress of a replay (its Progress
// method) on w: with w a terminal, a bar per partition redrawn every 200ms;
// otherwise a log line on log every interval (none when interval is 0). dry
// marks a dry run.
func NewReplayView(w io.Writer, progress func() []pipeline.ReplayProgress, dry bool, interval time.Duration, log *slog.Logger) *ReplayView {
	v := &ReplayView{w: w, progress: progress, dry: dry, log: log, stop: make(chan struct{}), done: make(chan struct{}),
		last: map[int32]int64{}, rate: map[int32]float64{}}
	term := IsTerminal(w)
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

func (v *ReplayView) loop(interval time.Duration, term bool) {
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

// Close stops the display after a last frame.
func (v *ReplayView) Close() {
	select {
	case <-v.done:
		return
	default:
	}
	close(v.stop)
	<-v.done
}

// sample updates each partition's smoothed rate from its landed offset.
func (v *ReplayView) sample(ps []pipeline.ReplayProgress) {
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

func (v *ReplayView) frame() {
	ps := v.progress()
	v.sample(ps)
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.drawn)
	}
	for _, p := range ps {
		fmt.Fprintf(&b, "\r\x1b[Kpartition %-3d %s\n", p.Partition, Bar(p, v.rate[p.Partition], 30))
	}
	v.drawn = len(ps)
	_, _ = io.WriteString(v.w, b.String())
}

// Bar renders one partition: [=====>    ] done/total pct rate ETA.
func Bar(p pipeline.ReplayProgress, rate float64, width int) string {
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
func (v *ReplayView) line() {
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
