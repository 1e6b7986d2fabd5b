package main

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of replay and reset-offsets (besides the shared ones of run).
const (
	fID               = "id"
	fReplayFrom       = fFrom       // "from": produce reads records from a file with it
	fReplayPartitions = fPartitions // "partitions": a list here, a count in produce
	fTo               = "to"
	fDryRun           = "dry-run"
	fForce            = "force"
	fCheckpointPrefix = "checkpoint-prefix"
)

func replayFlags() []cli.Flag {
	fs := []cli.Flag{
		brokersFlag(),
		&cli.StringFlag{Name: fTopic, Sources: fromEnv(fTopic), Usage: "topic to replay (required)"},
		&cli.StringFlag{Name: fID, Sources: fromEnv(fID),
			Usage: "replay id (required): its progress and its planned range are kept in Redis under it; rerun with the same id and the same --from, --to and --partitions to continue (the range its first run planned is reused, even for a duration ago); other range flags under the same id are refused (exit 2): use a new id for a new range"},
		&cli.StringFlag{Name: fReplayFrom, Sources: fromEnv(fReplayFrom),
			Usage: "where to start (required): an offset (0), an RFC 3339 time (2026-11-30T04:00:00Z: the first record at or after it) or a duration ago (90m)"},
		&cli.StringFlag{Name: fTo, Sources: fromEnv(fTo),
			Usage: "where to stop, exclusive: an offset, an RFC 3339 time or a duration ago (default: the end of each partition when the replay starts)"},
		&cli.StringFlag{Name: fReplayPartitions, Sources: fromEnv(fReplayPartitions),
			Usage: "partitions to replay, comma-separated (default: all)"},
	}
	fs = append(fs, ledgerFlags()...)
	fs = append(fs, durabilityFlags()...)
	fs = append(fs, commitFlags()...)
	fs = append(fs, poisonFlags()...)
	return append(fs,
		&cli.BoolFlag{Name: fDryRun, Sources: fromEnv(fDryRun),
			Usage: "read the range and the ledger only (EXISTS), write nothing, and print per partition how many records would be applied and suppressed"},
		&cli.FloatFlag{Name: fRate, Sources: fromEnv(fRate),
			Usage: "apply at most this many records per second over all partitions (0: no limit; a dry run is not paced)"},
		&cli.BoolFlag{Name: fForce, Sources: fromEnv(fForce),
			Usage: "replay even when the range holds records older than --ttl whose keys the ledger lacks: their entries may have expired, so their effects apply again (skips that check)"},
		&cli.StringFlag{Name: fCheckpointPrefix, Value: pipeline.DefaultReplayPrefix, Sources: fromEnv(fCheckpointPrefix),
			Usage: "prefix of the replay's checkpoint keys in Redis (prefix + id + :topic:partition)"},
		connectTimeoutFlag(),
		&cli.DurationFlag{Name: fReportInterval, Value: 10 * time.Second, Sources: fromEnv(fReportInterval),
			Usage: "when stderr is not a terminal: how often to log a progress line (0: never)"},
		&cli.StringFlag{Name: fMetricsAddr, Sources: fromEnv(fMetricsAddr),
			Usage: "serve Prometheus metrics (the same series as run's, per partition of the replay) at http://ADDR/metrics, e.g. :9465 (empty: off)"},
		&cli.StringFlag{Name: fLogFormat, Value: "text", Sources: fromEnv(fLogFormat),
			Usage: "log format on stderr: text or json"},
		&cli.StringFlag{Name: fLogLevel, Value: "info", Sources: fromEnv(fLogLevel),
			Usage: "log level: debug, info, warn or error"},
	)
}

// replayConfig is replay's validated configuration.
type replayConfig struct {
	brokers      []string
	topic        string
	id           string
	from, to     pipeline.Bound
	partitions   []int32
	ledgerConfig ledgerConfig
	commitConfig commitConfig
	poisonConfig
	dryRun, force    bool
	rate             float64
	checkpointPrefix string
	given            string // the range flags as given, stored with the plan by the first run of the id
	connectTimeout   time.Duration
	reportInterval   time.Duration
	metricsAddr      string // "": no metrics
	logFormat        string
	logLevel         slog.Level
}

func loadReplayConfig(c *cli.Command, now time.Time) (replayConfig, error) {
	var (
		rc  replayConfig
		bad problems
		err error
	)
	rc.brokers = brokerList(&bad, c.StringSlice(fBrokers))
	rc.topic = strings.TrimSpace(c.String(fTopic))
	if rc.topic == "" {
		bad.addf("%s: no topic given", flagRef(fTopic))
	} else if msg := topicProblem(rc.topic); msg != "" {
		bad.addf("%s %q: %s", flagRef(fTopic), rc.topic, msg)
	}
	rc.id = strings.TrimSpace(c.String(fID))
	if rc.id == "" {
		bad.addf("%s: empty; name the replay (for example restore-2026-11-30) so a rerun can continue it", flagRef(fID))
	}
	if s := c.String(fReplayFrom); s == "" {
		bad.addf("%s: empty; give an offset, an RFC 3339 time or a duration ago", flagRef(fReplayFrom))
	} else if rc.from, err = parseBound(s, now); err != nil {
		bad.addf("%s %q: %v", flagRef(fReplayFrom), s, err)
	}
	if s := c.String(fTo); s != "" {
		if rc.to, err = parseBound(s, now); err != nil {
			bad.addf("%s %q: %v", flagRef(fTo), s, err)
		}
	}
	if s := c.String(fReplayPartitions); s != "" {
		for _, f := range splitList([]string{s}) {
			n, err := strconv.ParseInt(f, 10, 32)
			if err != nil || n < 0 {
				bad.addf("%s %q: %q is not a partition number", flagRef(fReplayPartitions), s, f)
				continue
			}
			rc.partitions = append(rc.partitions, int32(n))
		}
	}
	rc.given = givenBounds(c.String(fReplayFrom), c.String(fTo), rc.partitions)
	rc.ledgerConfig = loadLedgerConfig(c, &bad)
	if rc.ledgerConfig.httpEffect {
		bad.addf("%s http: replay does not run guard mode; it takes none or totals", flagRef(fEffect))
	}
	rc.ledgerConfig.durability = loadDurabilityConfig(c, &bad, rc.ledgerConfig.redis.cluster)
	rc.commitConfig = loadCommitConfig(c, &bad)
	rc.poisonConfig = loadPoisonConfig(c, &bad, []string{rc.topic}, rc.ledgerConfig.prefix)
	rc.dryRun, rc.force = c.Bool(fDryRun), c.Bool(fForce)
	if rc.rate = c.Float(fRate); rc.rate < 0 {
		bad.addf("%s %v: must be 0 (no limit) or more", flagRef(fRate), rc.rate)
	}
	if rc.checkpointPrefix = c.String(fCheckpointPrefix); rc.checkpointPrefix == "" {
		bad.addf("%s: empty; replay checkpoints need a prefix of their own", flagRef(fCheckpointPrefix))
	}
	rc.connectTimeout = positive(&bad, c, fConnectTimeout)
	if rc.reportInterval = c.Duration(fReportInterval); rc.reportInterval < 0 {
		bad.addf("%s %v: must be 0 (off) or more", flagRef(fReportInterval), rc.reportInterval)
	}
	if rc.metricsAddr = c.String(fMetricsAddr); rc.metricsAddr != "" {
		if msg := listenAddrProblem(rc.metricsAddr); msg != "" {
			bad.addf("%s %q: %s", flagRef(fMetricsAddr), rc.metricsAddr, msg)
		}
	}
	rc.logFormat = logFormat(&bad, c.String(fLogFormat))
	rc.logLevel = logLevel(&bad, c.String(fLogLevel))
	if len(bad) > 0 {
		return rc, usageErr(bad...)
	}
	return rc, nil
}

// parseBound reads an offset (a whole number), an RFC 3339 time, or a
// positive duration, which means that long before now.
func parseBound(s string, now time.Time) (pipeline.Bound, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return pipeline.Bound{}, fmt.Errorf("offset %d is negative", n)
		}
		return pipeline.AtOffset(n), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return pipeline.AtTime(t), nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return pipeline.Bound{}, fmt.Errorf("duration %v: want a positive duration (how long ago)", d)
		}
		return pipeline.AtTime(now.Add(-d)), nil
	}
	return pipeline.Bound{}, fmt.Errorf("want an offset (0), an RFC 3339 time (2026-11-30T04:00:00Z) or a duration ago (90m)")
}

// givenBounds describes the range flags as given, for the plan the first run
// of an id stores: a rerun continues the id only with the same description
// (a duration ago is kept as written, so the same command line matches).
func givenBounds(from, to string, partitions []int32) string {
	to = strings.TrimSpace(to)
	if to == "" {
		to = "(end)"
	}
	ps := "(all)"
	if len(partitions) > 0 {
		sorted := slices.Sorted(slices.Values(partitions))
		strs := make([]string, 0, len(sorted))
		for _, p := range slices.Compact(sorted) {
			strs = append(strs, strconv.Itoa(int(p)))
		}
		ps = strings.Join(strs, ",")
	}
	return fmt.Sprintf("--from %s --to %s --partitions %s", strings.TrimSpace(from), to, ps)
}
