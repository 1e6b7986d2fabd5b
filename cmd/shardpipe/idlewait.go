package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
)

// idleGrace is how long run may hold no partition after start before it
// looks at the group to say why.
const idleGrace = 3 * time.Second

// explainNoPartitions logs, once, why run holds no partition when it still
// holds none idleGrace after start while the group has other members: most
// often the member of a process killed without leaving the group (SIGKILL,
// a crash), which keeps its partitions until its session times out. It
// returns once run holds a partition, after logging, or when ctx ends.
func explainNoPartitions(ctx context.Context, p *pipeline.Pipeline, rc *runConfig, log *slog.Logger) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	start := time.Now()
	adm := kadm.NewClient(p.Client())
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, s := range p.Stats() {
			if s.Held {
				return
			}
		}
		if time.Since(start) < idleGrace {
			continue
		}
		me, _ := p.Client().GroupMetadata()
		dctx, cancel := context.WithTimeout(ctx, rc.connectTimeout)
		st, err := admin.DescribeGroup(dctx, adm, rc.group, rc.topics...)
		cancel()
		if err != nil {
			continue // not joined yet, or the group is being created: look again
		}
		var others []string
		for _, m := range st.Members {
			if m.ID != me {
				others = append(others, fmt.Sprintf("%s (client %s, host %s)", m.ID, m.ClientID, m.Host))
			}
		}
		if len(others) == 0 {
			continue
		}
		session := rc.sessionTimeout.String() + " (--session-timeout)"
		if rc.protocol == pipeline.Consumer {
			session = "the broker's group.consumer.session.timeout.ms (45s by default)"
		}
		log.Warn("holding no partitions yet: the group still has other members; a member of a process killed without leaving the group (SIGKILL, a crash, a lost host) keeps its partitions until its session times out, then they are assigned here; a group with more members than partitions leaves some idle",
			"group", rc.group, "state", st.State, "other_members", strings.Join(others, "; "), "session_timeout", session)
		return
	}
}
