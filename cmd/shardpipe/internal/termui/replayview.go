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
	drawn    int                   // lines drawn by the last frame on a terminal
	last     map[int32]*rateWindow // each partition's landed offsets over the last RateWindow
}

// NewReplayView starts showing the progress of a replay (its Progress
// method) on w: with w a terminal, a bar per partition redrawn every 200ms;
// otherwise a log line on log every interval (none when interval is 0). dry
// marks a dry run. Rates (and the ETAs they give) are measured over the
// last RateWindow from samples taken every SampleEvery, so they settle
// within a second or two whatever the interval.
func NewReplayView(w io.Writer, progress func() []pipeline.ReplayProgress, dry bool, interval time.Duration, log *slog.Logger) *ReplayView {
	v := &ReplayView{w: w, progress: progress, dry: dry, log: log, stop: make(chan struct{}), done: make(chan struct{}),
		last: map[int32]*rateWindow{}}
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
	s := time.NewTicker(SampleEvery)
	defer s.Stop()
	v.sample(v.progress(), time.Now())
	for {
		select {
		case <-v.stop:
			if term {
				v.frame()
			}
			return
		case now := <-s.C:
			v.sample(v.progress(), now)
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

// sample adds each partition's landed offset at now to its rate window.
func (v *ReplayView) sample(ps []pipeline.ReplayProgress, now time.Time) {
	for _, p := range ps {
		w := v.last[p.Partition]
		if w == nil {
			w = &rateWindow{}
			v.last[p.Partition] = w
		}
		w.add(now, p.Landed)
	}
}

// rateOf returns partition p's records per second over the last RateWindow.
func (v *ReplayView) rateOf(p int32) float64 {
	if w := v.last[p]; w != nil {
		return w.rate()
	}
	return 0
}

func (v *ReplayView) frame() {
	ps := v.progress()
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.drawn)
	}
	for _, p := range ps {
		fmt.Fprintf(&b, "\r\x1b[Kpartition %-3d %s\n", p.Partition, Bar(p, v.rateOf(p.Partition), 30))
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
	var total, done, applied, suppressed int64
	var rate float64
	finished := 0
	for _, p := range ps {
		t := max(p.To-p.Begin, 0)
		total += t
		done += min(max(p.Landed-p.Begin, 0), t)
		applied += p.Applied
		suppressed += p.Suppressed
		rate += v.rateOf(p.Partition)
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
