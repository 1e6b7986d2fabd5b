package admin

import (
	"context"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/internal/typo"
)

// DidYouMean words Near for a message: ` (did you mean "orders"?)`, or
// ` (did you mean "a" or "b"?)`; "" when Near is empty.
func (e *CheckError) DidYouMean() string {
	if len(e.Near) == 0 {
		return ""
	}
	q := make([]string, len(e.Near))
	for i, n := range e.Near {
		q[i] = strconv.Quote(n)
	}
	last := len(q) - 1
	if last == 0 {
		return " (did you mean " + q[0] + "?)"
	}
	return " (did you mean " + strings.Join(q[:last], ", ") + " or " + q[last] + "?)"
}

// near returns the names of existing closest to name (CheckError.Near).
func near(name string, existing []string) []string { return typo.Closest(name, existing, 3) }

// topicNames lists the topics of the cluster, internal ones left out, for
// CheckError.Near; nil when the listing fails: the missing topic is the
// error either way. One Metadata request.
func topicNames(ctx context.Context, adm *kadm.Client) []string {
	ts, err := adm.ListTopics(ctx)
	if err != nil {
		return nil
	}
	return ts.Names()
}
