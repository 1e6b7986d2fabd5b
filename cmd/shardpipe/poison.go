package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/opshttp"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of poison records; run and replay share them.
const (
	fOnPoison       = "on-poison"
	fDLQTopic       = "dlq-topic"
	fPoisonAttempts = "poison-attempts"
	fDLQPrefix      = "dlq-prefix"
	fDLQMaxRun      = "dlq-max-run" // the poison storm bounds (pipeline.DeadLetterMaxRun, DeadLetterMaxShare)
	fDLQMaxShare    = "dlq-max-share"
	fDLQWindow      = "dlq-window"
)

// poisonConfig says what run and replay do with a poison record (no usable
// key, a value the effect cannot read) once its attempts are spent.
type poisonConfig struct {
	deadLetter     bool   // --on-poison dlq
	dlqTopic       string // "": <topic>.dlq
	dlqPrefix      string // the dead-letter markers' key prefix
	poisonAttempts int
	createDLQ      bool    // create missing dead-letter topics (run's --create-dlq-topic)
	maxRun         int     // --dlq-max-run; 0: no bound
	maxShare       float64 // --dlq-max-share; 0: no bound
	window         int     // --dlq-window
}

// poisonGroup is the poison-record flags run and replay share; topics are
// the consumed topics, which the dead-letter topic must not be, and
// ledgerPrefix the ledger's, which the markers must not overlap (both
// loaded by earlier groups).
func poisonGroup(pc *poisonConfig, topics func() []string, ledgerPrefix *string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) { pc.load(c, bad, topics(), *ledgerPrefix) },
		&cli.StringFlag{Name: fOnPoison, Value: "dlq",
			Usage: "a poison record (no usable key, a value the effect cannot read), once its attempts are spent: dlq (write it to the dead-letter topic, once, then commit past it) or stop (exit 1, offset stays before it)"},
		&cli.StringFlag{Name: fDLQTopic,
			Usage: "dead-letter topic for every consumed topic (empty: <topic>.dlq for each); it must exist (run: unless --create-dlq-topic creates it)"},
		&cli.IntFlag{Name: fPoisonAttempts, Value: 3,
			Usage: "attempts in all for a poison record, with backoff from 100ms to 2s between them, before --on-poison applies"},
		&cli.StringFlag{Name: fDLQPrefix, Value: "shardpipe:",
			Usage: "prefix of shardpipe's own Redis keys besides the ledger: the markers that keep each dead letter written once (prefix + dlq:topic:partition:offset), the key written before each durability wait (prefix + fence) and the one each readiness probe writes (prefix + health); they must not overlap --ledger-prefix, so no business key can name one"},
		&cli.IntFlag{Name: fDLQMaxRun, Value: pipeline.DefaultDeadLetterMaxRun,
			Usage: "--on-poison dlq: stop (exit 1) at the poison record that makes more than this many in a row on a partition, before committing past it: so many say the configuration (--key-from, --effect fields) is wrong, not the data (0: no bound)"},
		&cli.FloatFlag{Name: fDLQMaxShare, Value: pipeline.DefaultDeadLetterMaxShare,
			Usage: "--on-poison dlq: stop (exit 1) at the poison record that makes more than this share of a partition's last --dlq-window records poison (0: no bound)"},
		&cli.IntFlag{Name: fDLQWindow, Value: pipeline.DefaultDeadLetterWindow,
			Usage: "--on-poison dlq: how many of a partition's last records --dlq-max-share looks at"})
}

func (pc *poisonConfig) load(c *cli.Command, bad *cliflags.Problems, topics []string, ledgerPrefix string) {
	pc.dlqPrefix = c.String(fDLQPrefix)
	switch {
	case pc.dlqPrefix == "":
		bad.Addf("%s: empty; dead-letter markers need a prefix of their own", flagRef(fDLQPrefix))
	case ledgerPrefix != "" && overlap(pc.dlqPrefix+"dlq:", ledgerPrefix):
		bad.Addf("%s %q: its markers (%sdlq:...) overlap %s %q, so a business key could name a marker; give them distinct prefixes",
			flagRef(fDLQPrefix), pc.dlqPrefix, pc.dlqPrefix, flagRef(fLedgerPrefix), ledgerPrefix)
	case ledgerPrefix != "" && overlap(fenceKey(pc.dlqPrefix), ledgerPrefix):
		bad.Addf("%s %q: its durability fence key %s overlaps %s %q, so a business key could name it; give them distinct prefixes",
			flagRef(fDLQPrefix), pc.dlqPrefix, fenceKey(pc.dlqPrefix), flagRef(fLedgerPrefix), ledgerPrefix)
	case ledgerPrefix != "" && overlap(opshttp.HealthKey(pc.dlqPrefix), ledgerPrefix):
		bad.Addf("%s %q: the readiness probe's key %s overlaps %s %q, so a business key could name it; give them distinct prefixes",
			flagRef(fDLQPrefix), pc.dlqPrefix, opshttp.HealthKey(pc.dlqPrefix), flagRef(fLedgerPrefix), ledgerPrefix)
	}
	switch s := c.String(fOnPoison); s {
	case "dlq":
		pc.deadLetter = true
	case "stop":
	default:
		bad.Addf("%s %q: want dlq or stop", flagRef(fOnPoison), s)
	}
	if pc.dlqTopic = strings.TrimSpace(c.String(fDLQTopic)); pc.dlqTopic != "" {
		if msg := flagcheck.Topic(pc.dlqTopic); msg != "" {
			bad.Addf("%s %q: %s", flagRef(fDLQTopic), pc.dlqTopic, msg)
		}
		if slices.Contains(topics, pc.dlqTopic) {
			bad.Addf("%s %q: also consumed (%s); dead letters would be read back as input", flagRef(fDLQTopic), pc.dlqTopic, flagRef(fTopic))
		}
	}
	pc.maxRun, pc.maxShare, pc.window = c.Int(fDLQMaxRun), c.Float(fDLQMaxShare), c.Int(fDLQWindow)
	if pc.maxRun < 0 {
		bad.Addf("%s %d: want 0 (no bound) or more", flagRef(fDLQMaxRun), pc.maxRun)
	}
	if pc.maxShare < 0 || pc.maxShare > 1 {
		bad.Addf("%s %v: want 0 (no bound) to 1", flagRef(fDLQMaxShare), pc.maxShare)
	}
	if pc.window < 1 {
		bad.Addf("%s %d: want at least 1 record", flagRef(fDLQWindow), pc.window)
	}
	if pc.poisonAttempts = c.Int(fPoisonAttempts); pc.poisonAttempts < 1 || pc.poisonAttempts > 100 {
		bad.Addf("%s %d: want 1 to 100", flagRef(fPoisonAttempts), pc.poisonAttempts)
	}
}

// options returns the pipeline options for pc; the dead-letter markers live
// in the ledger's Redis, for the ledger's TTL.
func (pc poisonConfig) options(rdb redis.UniversalClient, lc ledgerConfig) []pipeline.Opt {
	opts := []pipeline.Opt{pipeline.PoisonAttempts(pc.poisonAttempts)}
	if pc.deadLetter {
		opts = append(opts, pipeline.DeadLetters(rdb, pc.dlqPrefix, pipeline.DeadLetterTo(pc.dlqTopic),
			pipeline.DeadLetterTTL(lc.ttl), pipeline.DeadLetterMaxRun(pc.maxRun), pipeline.DeadLetterMaxShare(pc.maxShare, pc.window)))
	}
	return opts
}

// checkDeadLetterTopics fails (unavailable, exit 3) naming each missing
// dead-letter topic of sources when pc dead-letters, after creating them
// with --create-dlq-topic.
func (pc poisonConfig) checkDeadLetterTopics(ctx context.Context, k kafkaConn, sources []string, timeout time.Duration, log *slog.Logger) error {
	if !pc.deadLetter {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return exitFor(k.withAdmin(func(adm *kadm.Client) error {
		return admin.EnsureDeadLetterTopics(ctx, adm, pc.dlqTopic, sources, pc.createDLQ, log)
	}), k.brokers, timeout)
}

// overlap reports whether one key namespace holds the other.
func overlap(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }

// poisonStorm words a run or replay stopped by a poison storm
// (pipeline.ErrPoisonStorm): the error, then that the configuration is the
// likely cause and what to do; nil for any other error.
func poisonStorm(err error) error {
	if !errors.Is(err, pipeline.ErrPoisonStorm) {
		return nil
	}
	return &exitError{code: exitFailure, lines: []string{err.Error(),
		fmt.Sprintf("so many poison records say the configuration, not the data, is the likely cause: check %s and the --effect fields against a record of the topic; the partition stopped before committing past this record; the records of the run before it are in the dead-letter topic (reset-offsets to the run's first offset reads them again once fixed; raise %s or %s if the data is really this bad)",
			flagRef(fKeyFrom), flagRef(fDLQMaxRun), flagRef(fDLQMaxShare))}}
}
