package admin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/pipeline"
)

// Idle is why a pipeline holds no partition while its group has other
// members: most often the member of a process killed without leaving the
// group (SIGKILL, a crash), which keeps its partitions until its session
// times out; or a group with more members than partitions.
type Idle struct {
	Group  string   // the group
	State  string   // the group's state as the broker reports it
	Others []Member // the group's members other than the pipeline's own
}

// OthersString lists Others as "ID (client C, host H)", separated by "; ".
func (i Idle) OthersString() string {
	var s []string
	for _, m := range i.Others {
		s = append(s, fmt.Sprintf("%s (client %s, host %s)", m.ID, m.ClientID, m.Host))
	}
	return strings.Join(s, "; ")
}

// WaitIdle looks, every second, whether p holds a partition. Once p has
// held none for grace since the call, it describes group (DescribeGroup,
// over topics, each look bounded by timeout) and returns the Idle and true
// when the group has members other than p's. It returns false once p holds
// a partition or ctx ends. A look that fails (p has not joined yet, the
// group is being created) or finds no other member is repeated at the next
// tick. Its cost: a Stats call a second, and after grace a DescribeGroup
// (a few requests) a second.
func WaitIdle(ctx context.Context, p *pipeline.Pipeline, group string, topics []string, grace, timeout time.Duration) (Idle, bool) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	start := time.Now()
	adm := kadm.NewClient(p.Client())
	for {
		select {
		case <-ctx.Done():
			return Idle{}, false
		case <-t.C:
		}
		for _, s := range p.Stats() {
			if s.Held {
				return Idle{}, false
			}
		}
		if time.Since(start) < grace {
			continue
		}
		me, _ := p.Client().GroupMetadata()
		dctx, cancel := context.WithTimeout(ctx, timeout)
		st, err := DescribeGroup(dctx, adm, group, topics...)
		cancel()
		if err != nil {
			continue
		}
		idle := Idle{Group: group, State: st.State}
		for _, m := range st.Members {
			if m.ID != me {
				idle.Others = append(idle.Others, m)
			}
		}
		if len(idle.Others) > 0 {
			return idle, true
		}
	}
}
