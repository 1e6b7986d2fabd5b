package main

import (
	"log/slog"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pipeline"
)

// fCommitEvery is the commit policy's count flag, which bench takes too.
const fCommitEvery = settings.FlagCommitEvery

// commitConfig is the commit policy and batch size (settings.Commit);
// maxBatch is copied out once loaded.
type commitConfig struct {
	c        settings.Commit
	maxBatch int
}

func commitGroup(cc *commitConfig) cliflags.Group {
	return cliflags.Then(settings.CommitGroup(&cc.c), func() { cc.maxBatch = cc.c.MaxBatch })
}

// options returns the pipeline options run and replay share: cc with
// maxBatch, the logger, shardpipe's client ID, and barrier before every
// commit (when not nil).
func (cc commitConfig) options(maxBatch int, barrier pipeline.Barrier, log *slog.Logger) []pipeline.Opt {
	return append(cc.c.Options(maxBatch, barrier, log), pipeline.KafkaOptions(clientIDOpt()))
}
