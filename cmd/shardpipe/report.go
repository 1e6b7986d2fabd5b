package main

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

// reporter logs run's periodic one-line summary.
type reporter struct {
	p      *pipeline.Pipeline
	adm    *kadm.Client
	group  string
	topics []string
	log    *slog.Logger

	lastAt       time.Time
	lastAttempts int64
}

func newReporter(p *pipeline.Pipeline, group string, topics []string, log *slog.Logger) *reporter {
	return &reporter{p: p, adm: kadm.NewClient(p.Client()), group: group, topics: topics, log: log, lastAt: time.Now()}
}

// loop logs a summary every interval until ctx ends (never when interval is 0).
func (r *reporter) loop(ctx context.Context, interval time.Duration) {
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
func (r *reporter) report(ctx context.Context, interval time.Duration) {
	stats := r.p.Stats()
	attempts, applied, suppressed, deadLettered, fenced := pipeline.Totals(stats)
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

// final logs the totals when run ends.
func (r *reporter) final() {
	attempts, applied, suppressed, deadLettered, fenced := pipeline.Totals(r.p.Stats())
	r.log.Info("summary", "attempts", attempts, "applied", applied, "suppressed", suppressed,
		"dead_lettered", deadLettered, "fenced_commits", fenced)
}
