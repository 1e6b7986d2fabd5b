package termui

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
)

// RunReport logs run's progress: a "progress" line every interval and a
// "summary" line at the end, from the pipeline's stats and the group's lag.
type RunReport struct {
	p      *pipeline.Pipeline
	adm    *kadm.Client
	group  string
	topics []string
	log    *slog.Logger

	lastAt       time.Time
	lastAttempts int64
}

// NewRunReport returns the report of p, which consumes topics in group.
func NewRunReport(p *pipeline.Pipeline, group string, topics []string, log *slog.Logger) *RunReport {
	return &RunReport{p: p, adm: kadm.NewClient(p.Client()), group: group, topics: topics, log: log, lastAt: time.Now()}
}

// Loop logs a progress line every interval until ctx ends (never when
// interval is 0).
func (r *RunReport) Loop(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.report(ctx, interval)
		}
	}
}

// report logs one "progress" line: throughput since the last line, the
// group's lag over its topics (committed offsets, so it lags commits), and
// the counters since start.
func (r *RunReport) report(ctx context.Context, interval time.Duration) {
	stats := r.p.Stats()
	tot := pipeline.Totals(stats)
	attempts, applied, suppressed, deadLettered, fenced := tot.Attempts, tot.Applied, tot.Suppressed, tot.DeadLettered, tot.Fenced
	now := time.Now()
	rate := float64(attempts-r.lastAttempts) / now.Sub(r.lastAt).Seconds()
	r.lastAt, r.lastAttempts = now, attempts
	held, claimed := 0, int64(0)
	for _, s := range stats {
		if s.Held {
			held++
		}
		claimed += s.Claimed
	}
	attrs := []any{"records_per_sec", int64(rate + 0.5)}
	lctx, cancel := context.WithTimeout(ctx, max(interval, time.Second))
	lags, err := admin.GroupLag(lctx, r.adm, r.group, r.topics...)
	cancel()
	if errors.Is(err, kgo.ErrClientClosed) || ctx.Err() != nil {
		return // shutting down
	}
	if err != nil {
		attrs = append(attrs, "lag", -1, "lag_err", err.Error())
	} else {
		attrs = append(attrs, "lag", admin.TotalLag(lags))
	}
	attrs = append(attrs, "applied", applied, "claimed", claimed, "suppressed", suppressed, "dead_lettered", deadLettered,
		"fenced_commits", fenced, "partitions", held)
	r.log.Info("progress", attrs...)
}

// Final logs the totals since start.
func (r *RunReport) Final() {
	tot := pipeline.Totals(r.p.Stats())
	r.log.Info("summary", "attempts", tot.Attempts, "applied", tot.Applied, "suppressed", tot.Suppressed,
		"dead_lettered", tot.DeadLettered, "fenced_commits", tot.Fenced, "redelivered", tot.Redelivered)
}
