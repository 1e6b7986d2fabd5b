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
	fQueueRecords   = "queue-records"
	fQueueBytes     = "queue-bytes"
)

// The bounds of --queue-bytes: a queue of less than 1 KiB pauses its
// partition at nearly every record; one of more than 1 GiB is no bound.
const (
	minQueueBytes = 1 << 10
	maxQueueBytes = 1 << 30
)

// Commit is the commit policy, the batch size and a partition's queue
// bounds.
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
	// QueueRecords is the most records a partition's queue holds before
	// its fetching pauses (pipeline.QueueRecords; 0: the pipeline's
	// default, 4 x MaxBatch); 0 or at least MaxBatch.
	QueueRecords int
	// QueueBytes is the most bytes of keys, values and headers a
	// partition's queue holds before its fetching pauses
	// (pipeline.QueueBytes), 1 KiB to 1 GiB.
	QueueBytes int
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
		&cli.IntFlag{Name: fMaxBatch, Value: 500, Usage: "most records in one Redis round trip"},
		&cli.IntFlag{Name: fQueueRecords, Value: 0,
			Usage: "most records fetched and not yet taken that a partition's queue holds: reaching it (or --queue-bytes) pauses the partition's fetching until the queue is below half of both; with --max-in-flight also the most a partition holds in flight (0: 4 x --max-batch)"},
		&cli.StringFlag{Name: fQueueBytes, Value: flagcheck.FormatSize(2 << 20),
			Usage: "most bytes of keys, values and headers a partition's queue holds before its fetching pauses, beside --queue-records: about the memory a partition's queue takes, e.g. 512KiB or 16MiB (1KiB to 1GiB)"})
}

func (cc *Commit) load(c *cli.Command, bad *cliflags.Problems) {
	cc.Every = IntIn(c, bad, FlagCommitEvery, flagcheck.In(0, 1_000_000, "0: off"))
	cc.Interval = DurationIn(c, bad, fCommitInterval, flagcheck.In(0, 24*time.Hour, "0: off"))
	if cc.Every == 0 && cc.Interval == 0 {
		bad.Addf("%s and %s are both 0: offsets would be committed only at shutdown; set one",
			ref(FlagCommitEvery), ref(fCommitInterval))
	}
	cc.MaxBatch = IntIn(c, bad, fMaxBatch, flagcheck.In(1, 100_000, ""))
	if cc.QueueRecords = IntIn(c, bad, fQueueRecords, flagcheck.In(0, 10_000_000, "0: 4 x --max-batch")); cc.QueueRecords > 0 && cc.QueueRecords < cc.MaxBatch {
		bad.Addf("%s %d is below %s %d: a queue holds at least a batch; want at least it, or 0 for 4 x %s",
			ref(fQueueRecords), cc.QueueRecords, ref(fMaxBatch), cc.MaxBatch, ref(fMaxBatch))
	}
	cc.QueueBytes = queueBytes(c, bad)
	if cc.MaxUncommitted = IntIn(c, bad, fMaxUncommitted, flagcheck.In(0, 10_000_000, "0: the default")); cc.MaxUncommitted > 0 && cc.MaxUncommitted < cc.Every {
		bad.Addf("%s %d is below %s %d: want at least it, or 0 for the default",
			ref(fMaxUncommitted), cc.MaxUncommitted, ref(FlagCommitEvery), cc.Every)
	}
}

// queueBytes reads --queue-bytes, a size from 1 KiB to 1 GiB.
func queueBytes(c *cli.Command, bad *cliflags.Problems) int {
	v := c.String(fQueueBytes)
	n, err := flagcheck.ParseSize(v)
	switch {
	case err != nil:
		bad.Addf("%s: %v", ref(fQueueBytes), err)
	case n < minQueueBytes || n > maxQueueBytes:
		bad.Addf("%s %s: want %s to %s", ref(fQueueBytes), v, flagcheck.FormatSize(minQueueBytes), flagcheck.FormatSize(maxQueueBytes))
	}
	return int(n)
}

// Options returns the pipeline options of cc (its queue bounds among
// them: QueueBytes as loaded, QueueRecords unless 0) with maxBatch (which a
// caller may lower, as replay does for a rate) and log, with barrier run
// before every commit when it is not nil.
func (cc Commit) Options(maxBatch int, barrier pipeline.Barrier, log *slog.Logger) []pipeline.Opt {
	opts := []pipeline.Opt{pipeline.CommitEvery(cc.Every), pipeline.CommitInterval(cc.Interval),
		pipeline.MaxUncommitted(cc.MaxUncommitted), pipeline.MaxBatch(maxBatch), pipeline.Logger(log)}
	if cc.QueueRecords > 0 {
		opts = append(opts, pipeline.QueueRecords(cc.QueueRecords))
	}
	opts = append(opts, pipeline.QueueBytes(cc.QueueBytes))
	if barrier != nil {
		opts = append(opts, pipeline.BeforeCommit(barrier))
	}
	return opts
}
