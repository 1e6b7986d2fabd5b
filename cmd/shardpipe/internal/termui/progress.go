// Package termui holds the command's progress displays: produce's count of
// acknowledged records and replay's bars per partition, on a terminal or as
// plain lines.
package termui

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress shows produce's acknowledged records: a bar on a terminal, a
// plain line every interval otherwise.
type Progress struct {
	bar   *progressbar.ProgressBar // nil: plain lines
	w     io.Writer
	total int64 // -1: unknown
	acked atomic.Int64
	mu    sync.Mutex // serializes lines on w
	stop  chan struct{}
	done  chan struct{}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewProgress starts showing progress on w for total records (-1: unknown).
func NewProgress(w io.Writer, total int64, interval time.Duration) *Progress {
	p := &Progress{w: w, total: total, stop: make(chan struct{}), done: make(chan struct{})}
	if IsTerminal(w) {
		p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("producing"), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("records"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionSetWidth(30))
		close(p.done)
		return p
	}
	go p.lines(interval)
	return p
}

func (p *Progress) lines(interval time.Duration) {
	defer close(p.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			if p.total >= 0 {
				p.Printf("produce: %d/%d records acknowledged\n", p.acked.Load(), p.total)
			} else {
				p.Printf("produce: %d records acknowledged\n", p.acked.Load())
			}
		}
	}
}

// Printf writes a line on w, not interleaved with the progress lines.
func (p *Progress) Printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintf(p.w, format, args...)
}

// Add counts one acknowledged record. Safe for concurrent use.
func (p *Progress) Add() {
	p.acked.Add(1)
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

// Close stops the display, waiting for the last line until ctx ends.
func (p *Progress) Close(ctx context.Context) {
	if p.bar != nil {
		_ = p.bar.Exit()
		fmt.Fprintln(p.w)
		return
	}
	close(p.stop)
	select {
	case <-p.done:
	case <-ctx.Done():
	}
}
