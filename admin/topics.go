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
// wrapping ErrTopicMissing per missing topic, joined, or an
// *UnreachableError. One Metadata request.
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
	for _, t := range missing {
		fix := "create it"
		if what != "topic" {
			fix = "create it with as many partitions as its source topic"
		}
		errs = append(errs, &CheckError{Server: "kafka", Setting: what, Value: t, Fix: fix, Err: ErrTopicMissing,
			msg: fmt.Sprintf("kafka: %s %q does not exist", what, t)})
	}
	return errors.Join(errs...)
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
