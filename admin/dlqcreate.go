package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/shardpipe/shardpipe/internal/topics"
	"github.com/shardpipe/shardpipe/pipeline"
)

// CreatedTopic is a dead-letter topic CreateDeadLetterTopics created.
type CreatedTopic struct {
	Topic       string   // the dead-letter topic
	Partitions  int32    // its partition count: the most of its sources'
	Replication int16    // its replication factor: the most of its sources'
	Sources     []string // the consumed topics that dead-letter into it
}

// CreateDeadLetterTopics creates each missing dead-letter topic of sources
// (dlq for all of them, or <source>.dlq when dlq is ""), as Kafka Connect
// does for its dead-letter queue: with its source's partition count and
// replication factor (the most of them when several sources share it), and
// waits until every partition has a leader. A topic that exists is left as
// it is, also when another process creates it meanwhile. It returns the
// topics it created. A missing source is a *CheckError wrapping
// ErrTopicMissing; a broker that does not answer an *UnreachableError; a
// refused creation (no CREATE permission, say) is returned wrapped, naming
// the topic. One Metadata request, then one CreateTopics request per
// missing topic and Metadata requests until its leaders are there.
func CreateDeadLetterTopics(ctx context.Context, adm *kadm.Client, dlq string, sources []string) ([]CreatedTopic, error) {
	dlqs := DeadLetterTopics(dlq, sources)
	md, err := adm.Metadata(ctx, append(append([]string(nil), sources...), dlqs...)...)
	if err != nil {
		return nil, brokerUnreachable(err)
	}
	want := make(map[string]*CreatedTopic)
	var order []string
	for _, s := range sources {
		td, ok := md.Topics[s]
		if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			return nil, missingTopic("topic", s, "create it", topicNames(ctx, adm))
		}
		if td.Err != nil {
			return nil, brokerUnreachable(fmt.Errorf("topic %q: %w", s, td.Err))
		}
		t := pipeline.DeadLetterTopic(dlq, s)
		if d, ok := md.Topics[t]; ok && d.Err == nil {
			continue // exists
		}
		c := want[t]
		if c == nil {
			c = &CreatedTopic{Topic: t}
			want[t] = c
			order = append(order, t)
		}
		c.Sources = append(c.Sources, s)
		c.Partitions = max(c.Partitions, int32(len(td.Partitions)))
		for _, p := range td.Partitions {
			c.Replication = max(c.Replication, int16(len(p.Replicas)))
		}
	}
	var out []CreatedTopic
	for _, t := range order {
		c := want[t]
		created, err := topics.Create(ctx, adm, topics.Spec{Name: t, Partitions: c.Partitions, Replication: c.Replication, ExistOK: true})
		if err != nil {
			return out, fmt.Errorf("dead-letter topic for %v: %w", c.Sources, err)
		}
		if created {
			out = append(out, *c)
		}
	}
	return out, nil
}

// EnsureDeadLetterTopics is CheckDeadLetterTopics preceded, when create is
// true, by CreateDeadLetterTopics. It returns the topics it created (with
// their partitions, replication factor and sources, for the caller to
// report), also when a later one or the check fails, and the first error
// of either.
func EnsureDeadLetterTopics(ctx context.Context, adm *kadm.Client, dlq string, sources []string, create bool) ([]CreatedTopic, error) {
	var created []CreatedTopic
	if create {
		var err error
		if created, err = CreateDeadLetterTopics(ctx, adm, dlq, sources); err != nil {
			return created, err
		}
	}
	return created, CheckDeadLetterTopics(ctx, adm, dlq, sources)
}
