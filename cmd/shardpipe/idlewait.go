package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
)

// idleGrace is how long run may hold no partition after start before it
// looks at the group to say why.
const idleGrace = 3 * time.Second

// explainNoPartitions logs, once, why run holds no partition when it still
// holds none idleGrace after start while the group has other members
// (admin.WaitIdle). It returns once run holds a partition, after logging,
// or when ctx ends.
func explainNoPartitions(ctx context.Context, p *pipeline.Pipeline, rc *runConfig, log *slog.Logger) {
	if idle, ok := admin.WaitIdle(ctx, p, rc.group, rc.topics, idleGrace, rc.connectTimeout); ok {
		admin.Log(ctx, log, []admin.Warning{idle.Warning(rc.consume.SessionLimit())})
	}
}
