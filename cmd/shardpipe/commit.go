package main

import (
	"log/slog"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/pipeline"

	"github.com/shardpipe/shardpipe/internal/cliflags"
)

// Flag names of the commit policy and batch size; run and replay share them.
const (
	fCommitEvery    = "commit-every"
	fCommitInterval = "commit-interval"
	fMaxUncommitted = "max-uncommitted"
	fMaxBatch       = "max-batch"
)

// commitConfig is the commit policy and batch size.
type commitConfig struct {
	commitEvery    int
	commitInterval time.Duration
	maxUncommitted int // 0: the pipeline's default
	maxBatch       int
}

func commitGroup(cc *commitConfig) cliflags.Group {
	return cliflags.NewGroup(cc.load,
		&cli.IntFlag{Name: fCommitEvery, Value: 100,
			Usage: "commit a partition's offset after this many landed records (0: off)"},
		&cli.DurationFlag{Name: fCommitInterval, Value: 5 * time.Second,
			Usage: "commit landed records at most this long after the first of them landed (0: off)"},
		&cli.IntFlag{Name: fMaxUncommitted, Value: 0,
			Usage: "most records of a partition landed past its last commit: reaching it commits at once, and while commits fail the partition stops fetching; a crash re-reads at most this many (0: 10 x the larger of --commit-every and --max-batch)"},
		&cli.IntFlag{Name: fMaxBatch, Value: 500, Usage: "most records in one Redis round trip"})
}

func (cc *commitConfig) load(c *cli.Command, bad *cliflags.Problems) {
	if cc.commitEvery = c.Int(fCommitEvery); cc.commitEvery < 0 {
		bad.Addf("%s %d: must be 0 or more", flagRef(fCommitEvery), cc.commitEvery)
	}
	if cc.commitInterval = c.Duration(fCommitInterval); cc.commitInterval < 0 {
		bad.Addf("%s %v: must be 0 or more", flagRef(fCommitInterval), cc.commitInterval)
	}
	if cc.commitEvery == 0 && cc.commitInterval == 0 {
		bad.Addf("%s and %s are both 0: offsets would be committed only at shutdown; set one",
			flagRef(fCommitEvery), flagRef(fCommitInterval))
	}
	if cc.maxBatch = c.Int(fMaxBatch); cc.maxBatch < 1 {
		bad.Addf("%s %d: must be 1 or more", flagRef(fMaxBatch), cc.maxBatch)
	}
	switch cc.maxUncommitted = c.Int(fMaxUncommitted); {
	case cc.maxUncommitted < 0:
		bad.Addf("%s %d: must be 0 (the default) or more", flagRef(fMaxUncommitted), cc.maxUncommitted)
	case cc.maxUncommitted > 0 && cc.maxUncommitted < cc.commitEvery:
		bad.Addf("%s %d is below %s %d: want at least it, or 0 for the default",
			flagRef(fMaxUncommitted), cc.maxUncommitted, flagRef(fCommitEvery), cc.commitEvery)
	}
}

// options returns the pipeline options run and replay share: cc with
// maxBatch, the logger, and barrier before every commit (when not nil).
func (cc commitConfig) options(maxBatch int, barrier pipeline.Barrier, log *slog.Logger) []pipeline.Opt {
	opts := []pipeline.Opt{pipeline.CommitEvery(cc.commitEvery), pipeline.CommitInterval(cc.commitInterval),
		pipeline.MaxUncommitted(cc.maxUncommitted), pipeline.MaxBatch(maxBatch), pipeline.Logger(log),
		pipeline.KafkaOptions(clientIDOpt())}
	if barrier != nil {
		opts = append(opts, pipeline.BeforeCommit(barrier))
	}
	return opts
}

// appendOpts appends options of any scope to a group's or a replay's.
func appendOpts[O any](opts []O, more ...pipeline.Opt) []O {
	for _, o := range more {
		opts = append(opts, any(o).(O))
	}
	return opts
}
