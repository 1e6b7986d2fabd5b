package settings

import (
	"log/slog"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
)

// FlagCommitEvery is the commit policy's count flag, which bench takes too.
const FlagCommitEvery = "commit-every"

const (
	fCommitInterval = "commit-interval"
	fMaxUncommitted = "max-uncommitted"
	fMaxBatch       = "max-batch"
)

// Commit is the commit policy and batch size.
type Commit struct {
	// Every commits a partition's offset after this many landed records
	// (0: off).
	Every int
	// Interval commits landed records at most this long after the first of
	// them landed (0: off); Every and Interval are not both 0.
	Interval time.Duration
	// MaxUncommitted is the most records of a partition landed past its last
	// commit (0: the pipeline's default); 0 or at least Every.
	MaxUncommitted int
	// MaxBatch is the most records in one Redis round trip, at least 1.
	MaxBatch int
}

// CommitGroup is the commit policy's flags, loaded into cc.
func CommitGroup(cc *Commit) cliflags.Group {
	return cliflags.NewGroup(cc.load,
		&cli.IntFlag{Name: FlagCommitEvery, Value: 500,
			Usage: "commit a partition's offset after this many landed records (0: off)"},
		&cli.DurationFlag{Name: fCommitInterval, Value: 5 * time.Second,
			Usage: "commit landed records at most this long after the first of them landed (0: off)"},
		&cli.IntFlag{Name: fMaxUncommitted, Value: 0,
			Usage: "most records of a partition landed past its last commit: reaching it commits at once, and while commits fail the partition stops fetching; a crash re-reads at most this many (0: 10 x the larger of --commit-every and --max-batch)"},
		&cli.IntFlag{Name: fMaxBatch, Value: 500, Usage: "most records in one Redis round trip"})
}

func (cc *Commit) load(c *cli.Command, bad *cliflags.Problems) {
	cc.Every = IntIn(c, bad, FlagCommitEvery, flagcheck.In(0, 1_000_000, "0: off"))
	cc.Interval = DurationIn(c, bad, fCommitInterval, flagcheck.In(0, 24*time.Hour, "0: off"))
	if cc.Every == 0 && cc.Interval == 0 {
		bad.Addf("%s and %s are both 0: offsets would be committed only at shutdown; set one",
			ref(FlagCommitEvery), ref(fCommitInterval))
	}
	cc.MaxBatch = IntIn(c, bad, fMaxBatch, flagcheck.In(1, 100_000, ""))
	if cc.MaxUncommitted = IntIn(c, bad, fMaxUncommitted, flagcheck.In(0, 10_000_000, "0: the default")); cc.MaxUncommitted > 0 && cc.MaxUncommitted < cc.Every {
		bad.Addf("%s %d is below %s %d: want at least it, or 0 for the default",
			ref(fMaxUncommitted), cc.MaxUncommitted, ref(FlagCommitEvery), cc.Every)
	}
}

// Options returns the pipeline options of cc with maxBatch (which a
// caller may lower, as replay does for a rate) and log, with barrier run
// before every commit when it is not nil.
func (cc Commit) Options(maxBatch int, barrier pipeline.Barrier, log *slog.Logger) []pipeline.Opt {
	opts := []pipeline.Opt{pipeline.CommitEvery(cc.Every), pipeline.CommitInterval(cc.Interval),
		pipeline.MaxUncommitted(cc.MaxUncommitted), pipeline.MaxBatch(maxBatch), pipeline.Logger(log)}
	if barrier != nil {
		opts = append(opts, pipeline.BeforeCommit(barrier))
	}
	return opts
}
