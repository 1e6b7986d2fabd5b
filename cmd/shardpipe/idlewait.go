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

// idleWarning words what an admin.Idle means, for the log line that
// reports it.
const idleWarning = "holding no partitions yet: the group still has other members; a member of a process killed without leaving the group (SIGKILL, a crash, a lost host) keeps its partitions until its session times out, then they are assigned here; a group with more members than partitions leaves some idle"

// idleLine words i for one log line (idleWarning, at warn level); session
// says how long a dead member keeps its partitions, as run configured it.
func idleLine(i admin.Idle, session string) admin.Warning {
	return admin.Warning{Level: slog.LevelWarn, Message: idleWarning,
		Attrs: []any{"group", i.Group, "state", i.State, "other_members", i.OthersString(), "session_timeout", session}}
}

// explainNoPartitions logs, once, why run holds no partition when it still
// holds none idleGrace after start while the group has other members
// (admin.WaitIdle). It returns once run holds a partition, after logging,
// or when ctx ends.
func explainNoPartitions(ctx context.Context, p *pipeline.Pipeline, rc *runConfig, log *slog.Logger) {
	if idle, ok := admin.WaitIdle(ctx, p, rc.group, rc.topics, idleGrace, rc.connectTimeout); ok {
		admin.Log(ctx, log, []admin.Warning{idleLine(idle, rc.consume.SessionLimit())})
	}
}
