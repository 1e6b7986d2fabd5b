package main

import (
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of replay and reset-offsets (besides the shared ones).
const (
	fID               = "id"
	fReplayFrom       = "from" // produce reads records from a file with it
	fPartitionIDs     = "partition-ids"
	fTo               = "to"
	fDryRun           = "dry-run"
	fForce            = "force"
	fRate             = "rate"
	fCheckpointPrefix = "checkpoint-prefix"
)

// replayConfig is replay's validated configuration.
type replayConfig struct {
	kafkaConn
	topic      string
	id         string
	from, to   pipeline.Bound
	partitions []int32
	sinkConfig
	dryRun, force    bool
	rate             float64
	checkpointPrefix string
	given            string // the range flags as given, stored with the plan by the first run of the id
	now              time.Time
	metricsAddr      string // "": no metrics
}

func (rc *replayConfig) Groups() []cliflags.Group {
	rc.now = time.Now()
	gs := []cliflags.Group{kafkaGroup(&rc.kafkaConn), topicGroup(&rc.topic, "topic to replay"), cliflags.NewGroup(rc.loadRange,
		&cli.StringFlag{Name: fID,
			Usage: "replay id (required): its progress and its planned range are kept in Redis under it; rerun with the same id and the same --from, --to and --partition-ids to continue (the range its first run planned is reused, even for a duration ago); other range flags under the same id are refused (exit 2): use a new id for a new range"},
		&cli.StringFlag{Name: fReplayFrom,
			Usage: "where to start (required): an offset (0), an RFC 3339 time (2026-11-30T04:00:00Z: the first record at or after it) or a duration ago (90m)"},
		&cli.StringFlag{Name: fTo,
			Usage: "where to stop, exclusive: an offset, an RFC 3339 time or a duration ago (default: the end of each partition when the replay starts)"}),
		partitionsGroup(&rc.partitions, "partitions to replay, comma-separated (default: all)"),
	}
	gs = append(gs, rc.groups(func() []string { return []string{rc.topic} })...)
	gs = append(gs, cliflags.NewGroup(rc.loadRun,
		&cli.BoolFlag{Name: fDryRun,
			Usage: "read the range and the ledger only (EXISTS), write nothing, and print per partition how many records would be applied and suppressed"},
		&cli.FloatFlag{Name: fRate,
			Usage: "apply at most this many records per second over all partitions (0: no limit; a dry run is not paced)"},
		&cli.BoolFlag{Name: fForce,
			Usage: "replay even when the range holds records older than --ttl whose keys the ledger lacks: their entries may have expired, so their effects apply again (skips that check)"},
		&cli.StringFlag{Name: fCheckpointPrefix, Value: pipeline.DefaultReplayPrefix,
			Usage: "prefix of the replay's checkpoint keys in Redis (prefix + id + :topic:partition)"}),
		metricsGroup(&rc.metricsAddr, "serve Prometheus metrics (the same series as run's, per partition of the replay) at http://ADDR/metrics, e.g. :9465 (empty: off)"))
	return append(gs, rc.tail("when stderr is not a terminal: how often to log a progress line")...)
}

// loadRange reads --id, --from and --to.
func (rc *replayConfig) loadRange(c *cli.Command, bad *cliflags.Problems) {
	var err error
	if rc.id = strings.TrimSpace(c.String(fID)); rc.id == "" {
		bad.Addf("%s: empty; name the replay (for example restore-2026-11-30) so a rerun can continue it", flagRef(fID))
	}
	if s := c.String(fReplayFrom); s == "" {
		bad.Addf("%s: empty; give an offset, an RFC 3339 time or a duration ago", flagRef(fReplayFrom))
	} else if rc.from, err = flagcheck.ParseBound(s, rc.now); err != nil {
		bad.Addf("%s %q: %v", flagRef(fReplayFrom), s, err)
	}
	if s := c.String(fTo); s != "" {
		if rc.to, err = flagcheck.ParseBound(s, rc.now); err != nil {
			bad.Addf("%s %q: %v", flagRef(fTo), s, err)
		}
	}
}

// loadRun reads how replay runs, and the settings that need the range and
// the ledger.
func (rc *replayConfig) loadRun(c *cli.Command, bad *cliflags.Problems) {
	rc.given = flagcheck.GivenRange(c.String(fReplayFrom), c.String(fTo), rc.partitions)
	if rc.ledgerConfig.httpEffect {
		bad.Addf("%s http: replay does not run guard mode; it takes none or totals", flagRef(fEffect))
	}
	rc.dryRun, rc.force = c.Bool(fDryRun), c.Bool(fForce)
	if rc.rate = c.Float(fRate); rc.rate < 0 {
		bad.Addf("%s %v: must be 0 (no limit) or more", flagRef(fRate), rc.rate)
	}
	if rc.checkpointPrefix = c.String(fCheckpointPrefix); rc.checkpointPrefix == "" {
		bad.Addf("%s: empty; replay checkpoints need a prefix of their own", flagRef(fCheckpointPrefix))
	}
}

// partitionsGroup is --partition-ids, a list of partitions (replay and
// reset-offsets). It refuses SHARDPIPE_PARTITIONS, which is produce's
// partition count and was this list's variable once: read as a list, a
// count of 2 would silently limit a recovery to partition 2.
func partitionsGroup(ps *[]int32, usage string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		if v := os.Getenv(envName(fPartitions)); v != "" {
			bad.Addf("%s=%q is set: it is the partition count of produce and bench, not partitions to work on; name those with %s, and unset %s",
				envName(fPartitions), v, flagRef(fPartitionIDs), envName(fPartitions))
		}
		s := c.String(fPartitionIDs)
		var msgs []string
		if *ps, msgs = flagcheck.Partitions(s); len(msgs) > 0 {
			for _, m := range msgs {
				bad.Addf("%s %q: %s", flagRef(fPartitionIDs), s, m)
			}
		}
	}, &cli.StringFlag{Name: fPartitionIDs, Usage: usage})
}
