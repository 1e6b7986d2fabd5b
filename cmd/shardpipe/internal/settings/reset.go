package settings

import (
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
)

// FlagCreate lets reset-offsets create a group that does not exist; the
// refusal of a missing group names it.
const FlagCreate = "create"

// Reset is reset-offsets' own settings: where the group's offsets move,
// on which partitions, and how.
type Reset struct {
	// To is where the offsets move (--to, required).
	To admin.Target
	// Partitions are the partitions to move; nil: all.
	Partitions []int32
	// DryRun prints the moves and commits nothing.
	DryRun bool
	// Force moves the offsets although records older than the ledger TTL
	// may apply again (skips that check).
	Force bool
	// Create creates a group that does not exist with these offsets;
	// without it a missing group is refused.
	Create bool
}

// ResetGroups are reset-offsets' --to, --partition-ids (PartitionsGroup),
// --dry-run, --force and --create, loaded into r.
func ResetGroups(r *Reset) []cliflags.Group {
	return []cliflags.Group{cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		var err error
		if s := strings.TrimSpace(c.String(FlagTo)); s == "" {
			bad.Addf("%s: empty; want earliest, latest, an offset, an RFC 3339 time or a duration ago", ref(FlagTo))
		} else if r.To, err = ParseTarget(s, time.Now()); err != nil {
			bad.Addf("%s %q: %v, or earliest or latest", ref(FlagTo), s, err)
		}
	}, &cli.StringFlag{Name: FlagTo, Usage: "where to (required): earliest, latest, an offset, an RFC 3339 time or a duration ago"}),
		PartitionsGroup(&r.Partitions, "partitions to move, comma-separated (default: all)"),
		cliflags.NewGroup(func(c *cli.Command, _ *cliflags.Problems) {
			r.DryRun, r.Force, r.Create = c.Bool(FlagDryRun), c.Bool(FlagForce), c.Bool(FlagCreate)
		},
			&cli.BoolFlag{Name: FlagDryRun, Usage: "print the before and after table, commit nothing; allowed while the group is live, which the output notes"},
			&cli.BoolFlag{Name: FlagForce,
				Usage: "move the offsets even when the group would read again records older than --ttl whose keys the ledger lacks: their entries may have expired, so their effects apply again (skips that check)"},
			&cli.BoolFlag{Name: FlagCreate,
				Usage: "create the group with these offsets when it does not exist (without it a missing group is refused, exit 3)"})}
}

// ParseTarget reads reset-offsets' --to s: earliest (each partition's log
// start), latest (each partition's end), or else a pipeline.Bound as
// flagcheck.ParseBound reads it (an offset, an RFC 3339 time, a duration
// before now), whose error it returns.
func ParseTarget(s string, now time.Time) (admin.Target, error) {
	switch s {
	case "earliest":
		return admin.Earliest(), nil // clamped to the log start
	case "latest":
		return admin.Latest(), nil
	}
	b, err := flagcheck.ParseBound(s, now)
	if err != nil {
		return admin.Target{}, err
	}
	return admin.ToBound(b), nil
}
