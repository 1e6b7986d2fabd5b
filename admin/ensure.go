package admin

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/internal/topics"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Ensured is what EnsureTopic found and did.
type Ensured struct {
	// Existing is the partition count of the topic when it existed (0 when
	// it did not).
	Existing int
	// Created are the topics created: the topic, its dead-letter topic, or
	// both, in that order.
	Created []string
}

// EnsureTopic makes sure topic exists. With partitions above 0 it creates
// the topic when missing, and its dead-letter topic <topic>.dlq (what a
// pipeline's default dead letters go to; not for a topic that is itself a
// .dlq) when missing, with partitions partitions and replication
// (-1: the broker's default), each waiting for its partitions' leaders; a
// topic created meanwhile by another client is no error. An existing topic
// is not changed. With partitions 0 a missing topic is a *CheckError
// wrapping ErrTopicMissing. A broker that does not answer is an
// *UnreachableError. One Metadata request, one CreateTopics per topic made.
func EnsureTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int32, replication int16) (Ensured, error) {
	names := []string{topic}
	if partitions > 0 && !strings.HasSuffix(topic, ".dlq") {
		names = append(names, pipeline.DeadLetterTopic("", topic))
	}
	found, missing, err := TopicPartitions(ctx, adm, names...)
	if err != nil {
		return Ensured{}, err
	}
	e := Ensured{Existing: found[topic]}
	if len(missing) > 0 && partitions == 0 {
		return e, checkTopics(ctx, adm, "topic", []string{topic})
	}
	for _, name := range missing {
		created, err := topics.Create(ctx, adm, topics.Spec{Name: name, Partitions: partitions, Replication: replication, ExistOK: true})
		if err != nil {
			return e, err
		}
		if created {
			e.Created = append(e.Created, name)
		}
	}
	return e, nil
}
