package admin

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Warning is a finding of a start-up check that does not refuse the
// start, worded for one log line.
type Warning struct {
	// Level is slog.LevelWarn for a risk, slog.LevelDebug for a check
	// that could not be made.
	Level slog.Level
	// Message says what the finding risks.
	Message string
	// Attrs are the line's key-value pairs (topics, counts, durations).
	Attrs []any
}

// Log writes each of ws to log at its Level.
func Log(ctx context.Context, log *slog.Logger, ws []Warning) {
	for _, w := range ws {
		log.Log(ctx, w.Level, w.Message, w.Attrs...)
	}
}

// RetentionWarnings words CheckRetention's findings: a warning per topic
// whose retention.ms is longer than ttl or infinite (a record replayed
// after its ledger entry expired applies again); a debug line per topic
// whose configuration could not be read, or one when the request failed.
func RetentionWarnings(ctx context.Context, adm *kadm.Client, ttl time.Duration, topics ...string) []Warning {
	rs, err := CheckRetention(ctx, adm, ttl, topics...)
	if err != nil {
		return []Warning{{slog.LevelDebug, "cannot read topic configs; retention not checked", []any{"err", err}}}
	}
	var ws []Warning
	for _, r := range rs {
		switch {
		case r.Err != nil:
			ws = append(ws, Warning{slog.LevelDebug, "cannot read topic config; retention not checked", []any{"topic", r.Topic, "err", r.Err}})
		case r.Infinite():
			ws = append(ws, Warning{slog.LevelWarn, "topic retention is infinite, longer than the ledger TTL: a record replayed after its ledger entry expired applies again",
				[]any{"topic", r.Topic, "retention", "infinite", "ttl", ttl}})
		default:
			ws = append(ws, Warning{slog.LevelWarn, "topic retention is longer than the ledger TTL: a record replayed after its ledger entry expired applies again",
				[]any{"topic", r.Topic, "retention", r.Retention, "ttl", ttl}})
		}
	}
	return ws
}

// DeadLetterWarnings words CheckDeadLetterPartitions' findings: a warning
// per source topic whose dead-letter topic (dlq "": <source>.dlq) has
// another partition count (exactly once does not depend on it, only on
// the count not changing later); a debug line when the request failed.
func DeadLetterWarnings(ctx context.Context, adm *kadm.Client, dlq string, sources []string) []Warning {
	ms, err := CheckDeadLetterPartitions(ctx, adm, dlq, sources)
	if err != nil {
		return []Warning{{slog.LevelDebug, "cannot read partition counts; dead-letter topics not compared", []any{"err", err}}}
	}
	var ws []Warning
	for _, m := range ms {
		ws = append(ws, Warning{slog.LevelWarn, "dead-letter topic has another partition count than its source: source partition p writes to dead-letter partition p mod N, so dead letters of several source partitions share one (or some stay empty); each is still written once, but do not change the count once dead letters were written, or a record a crash left pending is written a second time",
			[]any{"topic", m.Source, "partitions", m.SourcePartitions, "dlq_topic", m.DeadLetter, "dlq_partitions", m.DeadLetterPartitions}})
	}
	return ws
}
