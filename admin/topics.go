package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/shardpipe/shardpipe/pipeline"
)

// TopicPartitions returns the partition count of each of topics that
// exists, and the names of those that do not, in the order given. A broker
// that does not answer is an *UnreachableError. One Metadata request.
func TopicPartitions(ctx context.Context, adm *kadm.Client, topics ...string) (map[string]int, []string, error) {
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, nil, brokerUnreachable(err)
	}
	found := make(map[string]int)
	var missing []string
	for _, t := range topics {
		td, ok := md.Topics[t]
		switch {
		case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
			missing = append(missing, t)
		case td.Err != nil:
			err := fmt.Errorf("topic %q: %w", t, td.Err)
			return nil, nil, brokerUnreachable(err)
		default:
			found[t] = len(td.Partitions)
		}
	}
	return found, missing, nil
}

// brokerUnreachable wraps a failed Kafka admin request.
func brokerUnreachable(err error) *UnreachableError {
	return unreachable("kafka", "Metadata", err, fmt.Sprintf("kafka: cannot reach a broker: %v", err))
}

// CheckTopics returns nil when every topic exists; else a *CheckError
// wrapping ErrTopicMissing per missing topic (its Near naming the existing
// topics closest to it), joined, or an *UnreachableError. One Metadata
// request, and one listing every topic when one is missing.
func CheckTopics(ctx context.Context, adm *kadm.Client, topics ...string) error {
	return checkTopics(ctx, adm, "topic", topics)
}

// CheckDeadLetterTopics returns nil when the dead-letter topic of every
// source exists (see DeadLetterTopics; dlq "" is each source's
// <source>.dlq); else a *CheckError wrapping ErrTopicMissing (Setting
// "dead-letter topic") per missing one, joined, or an *UnreachableError. A
// pipeline that dead-letters into a missing topic stops at the first poison
// record; check at start. One Metadata request.
func CheckDeadLetterTopics(ctx context.Context, adm *kadm.Client, dlq string, sources []string) error {
	return checkTopics(ctx, adm, "dead-letter topic", DeadLetterTopics(dlq, sources))
}

func checkTopics(ctx context.Context, adm *kadm.Client, what string, topics []string) error {
	_, missing, err := TopicPartitions(ctx, adm, topics...)
	if err != nil {
		return err
	}
	var errs []error
	var existing []string
	if len(missing) > 0 {
		existing = topicNames(ctx, adm)
	}
	for _, t := range missing {
		fix := "create it"
		if what != "topic" {
			fix = "create it with as many partitions as its source topic"
		}
		errs = append(errs, missingTopic(what, t, fix, existing))
	}
	return errors.Join(errs...)
}

// missingTopic is the *CheckError of topic t (what: "topic" or
// "dead-letter topic"), which does not exist, naming the existing topics
// closest to it.
func missingTopic(what, t, fix string, existing []string) *CheckError {
	e := &CheckError{Server: "kafka", Setting: what, Value: t, Fix: fix, Err: ErrTopicMissing, Near: near(t, existing)}
	e.msg = fmt.Sprintf("kafka: %s %q does not exist%s", what, t, e.DidYouMean())
	return e
}

// DeadLetterTopics returns the dead-letter topic of each source, once each,
// in the order of sources: dlq for all of them, or <source>.dlq when dlq is
// "" (pipeline.DeadLetterTopic).
func DeadLetterTopics(dlq string, sources []string) []string {
	seen := make(map[string]bool)
	var out []string
	for _, s := range sources {
		if t := pipeline.DeadLetterTopic(dlq, s); !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// DeadLetterPartitions is a source topic whose dead-letter topic has
// another partition count than it.
type DeadLetterPartitions struct {
	Source               string // the consumed topic
	SourcePartitions     int    // its partition count
	DeadLetter           string // its dead-letter topic
	DeadLetterPartitions int    // the dead-letter topic's partition count
}

// CheckDeadLetterPartitions returns every source whose dead-letter topic
// (dlq "" is each source's <source>.dlq) exists with a partition count
// other than the source's; missing topics are CheckDeadLetterTopics'
// concern and left out. A difference is a warning, not an error: source
// partition p writes to dead-letter partition p mod N, and the exactly-once
// scan for an earlier write matches the source topic, partition and offset
// headers, so fewer partitions only make several source partitions share
// one (their dead letters interleave) and more leave some empty. What the
// scan does depend on is N not changing once dead letters were written: the
// record is then looked for in another partition and written again, a
// second copy. One Metadata request.
func CheckDeadLetterPartitions(ctx context.Context, adm *kadm.Client, dlq string, sources []string) ([]DeadLetterPartitions, error) {
	topics := append(append([]string(nil), sources...), DeadLetterTopics(dlq, sources)...)
	found, _, err := TopicPartitions(ctx, adm, topics...)
	if err != nil {
		return nil, err
	}
	var out []DeadLetterPartitions
	for _, s := range sources {
		d := pipeline.DeadLetterTopic(dlq, s)
		sn, sok := found[s]
		dn, dok := found[d]
		if sok && dok && sn != dn {
			out = append(out, DeadLetterPartitions{Source: s, SourcePartitions: sn, DeadLetter: d, DeadLetterPartitions: dn})
		}
	}
	return out, nil
}
