package settings

import (
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of replay that reset-offsets shares, and replay's start.
const (
	FlagFrom   = "from"
	FlagTo     = "to"
	FlagDryRun = "dry-run"
	FlagForce  = "force"
)

const (
	fID               = "id"
	fCheckpointPrefix = "checkpoint-prefix"
)

// Replay is replay's own settings: which range of its topic it reads
// again, under which id, and how.
type Replay struct {
	// ID names the replay: its progress and planned range are kept in
	// Redis under it.
	ID string
	// From is where each partition's range starts (--from, required).
	From pipeline.Bound
	// To is where it ends, exclusive; the zero Bound is the end of each
	// partition when the replay starts.
	To pipeline.Bound
	// Partitions are the partitions to replay; nil: all (its group is
	// PartitionsGroup, which the caller passes it to).
	Partitions []int32
	// Given is the range flags as given, stored with the plan by the first
	// run of the id (flagcheck.GivenRange).
	Given string
	// Now is the time a duration ago counts back from; the zero time is
	// the time the range flags load.
	Now time.Time
	// DryRun reads the range and the ledger only and writes nothing.
	DryRun bool
	// Force replays although records older than the ledger TTL may apply
	// again (skips that check).
	Force bool
	// Rate is the most records applied per second over all partitions
	// (0: no limit).
	Rate float64
	// CheckpointPrefix is the prefix of the replay's checkpoint keys.
	CheckpointPrefix string
}

// ReplayRangeGroup is --id, --from and --to, loaded into r.
func ReplayRangeGroup(r *Replay) cliflags.Group {
	return cliflags.NewGroup(r.loadRange,
		&cli.StringFlag{Name: fID,
			Usage: "replay id (required): its progress and its planned range are kept in Redis under it; rerun with the same id and the same --from, --to and --partition-ids to continue (the range its first run planned is reused, even for a duration ago); other range flags under the same id are refused (exit 2): use a new id for a new range"},
		&cli.StringFlag{Name: FlagFrom,
			Usage: "where to start (required): an offset (0), an RFC 3339 time (2026-11-30T04:00:00Z: the first record at or after it) or a duration ago (90m)"},
		&cli.StringFlag{Name: FlagTo,
			Usage: "where to stop, exclusive: an offset, an RFC 3339 time or a duration ago (default: the end of each partition when the replay starts)"})
}

// loadRange reads --id, --from and --to.
func (r *Replay) loadRange(c *cli.Command, bad *cliflags.Problems) {
	if r.Now.IsZero() {
		r.Now = time.Now()
	}
	var err error
	if r.ID = strings.TrimSpace(c.String(fID)); r.ID == "" {
		bad.Addf("%s: empty; name the replay (for example restore-2026-11-30) so a rerun can continue it", ref(fID))
	}
	if s := c.String(FlagFrom); s == "" {
		bad.Addf("%s: empty; give an offset, an RFC 3339 time or a duration ago", ref(FlagFrom))
	} else if r.From, err = flagcheck.ParseBound(s, r.Now); err != nil {
		bad.Addf("%s %q: %v", ref(FlagFrom), s, err)
	}
	if s := c.String(FlagTo); s != "" {
		if r.To, err = flagcheck.ParseBound(s, r.Now); err != nil {
			bad.Addf("%s %q: %v", ref(FlagTo), s, err)
		}
	}
	if msg := flagcheck.RangeOrder(c.String(FlagFrom), c.String(FlagTo), r.Now); msg != "" {
		bad.Addf("%s %q is not before %s %q: %s, so the range is empty (--to is exclusive); swap them, or give a --to after --from",
			ref(FlagFrom), c.String(FlagFrom), ref(FlagTo), c.String(FlagTo), msg)
	}
}

// ReplayRunGroup is how replay runs, loaded into r after the range and
// its partitions. Replay takes every effect run takes, guard mode's (http,
// sql) with the flags of HTTPGroup and SQLGroup, as run does.
func ReplayRunGroup(r *Replay) cliflags.Group {
	return cliflags.NewGroup(r.loadRun,
		&cli.BoolFlag{Name: FlagDryRun,
			Usage: "read the range and the ledger only (EXISTS), write nothing, and print per partition how many records would be applied and suppressed"},
		&cli.FloatFlag{Name: fRate,
			Usage: "apply at most this many records per second over all partitions (0: no limit; a dry run is not paced)"},
		&cli.BoolFlag{Name: FlagForce,
			Usage: "replay even when the range holds records older than --ttl whose keys the ledger lacks: their entries may have expired, so their effects apply again (skips that check)"},
		&cli.StringFlag{Name: fCheckpointPrefix, Value: pipeline.DefaultReplayPrefix,
			Usage: "prefix of the replay's checkpoint keys in Redis (prefix + id + :topic:partition)"})
}

// loadRun reads how replay runs, and the settings that need the range.
func (r *Replay) loadRun(c *cli.Command, bad *cliflags.Problems) {
	r.Given = flagcheck.GivenRange(c.String(FlagFrom), c.String(FlagTo), r.Partitions)
	r.DryRun, r.Force = c.Bool(FlagDryRun), c.Bool(FlagForce)
	r.Rate = FloatIn(c, bad, fRate, flagcheck.In(0.0, 10_000_000, "0: no limit"))
	if r.CheckpointPrefix = c.String(fCheckpointPrefix); r.CheckpointPrefix == "" {
		bad.Addf("%s: empty; replay checkpoints need a prefix of their own", ref(fCheckpointPrefix))
	}
}
